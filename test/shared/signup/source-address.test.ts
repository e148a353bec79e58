import { describe, expect, it } from 'vitest';
import { sourceOf } from '../../../shared/signup/source-address.ts';

describe('the source a sign-up counts against (issue 29, defect 5)', () => {
  it('is an IPv4 address as it is, an IPv6 address’s /64, and IPv4 written as IPv6 as IPv4', () => {
    expect(sourceOf('192.0.2.1')).toBe('192.0.2.1');
    expect(sourceOf('2001:db8:1:2:3:4:5:6')).toBe('2001:db8:1:2::/64');
    expect(sourceOf('2001:DB8:1:2::ffff')).toBe('2001:db8:1:2::/64');
    expect(sourceOf('2001:db8::1')).toBe('2001:db8::/64');
    expect(sourceOf('::ffff:192.0.2.1')).toBe('192.0.2.1');
  });

  it('is `unknown` without an address or with one that is not', () => {
    expect(sourceOf(undefined)).toBe('unknown');
    expect(sourceOf('')).toBe('unknown');
    expect(sourceOf('not-an-ip')).toBe('unknown');
  });
});
