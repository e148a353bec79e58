/**
 * Where a webhook may go: the URL rules at registration (https only on
 * AWS, no credentials, no fragment, bounded, no forbidden address literal)
 * and the address rules every attempt applies to what a host resolves to.
 */
import { describe, expect, it } from 'vitest';
import {
  addressRefusal,
  urlRefusal,
} from '../../../shared/webhooks/addresses.ts';

const aws = { httpsOnly: true, allowLoopback: false };
const local = { httpsOnly: false, allowLoopback: true };

describe('webhook addresses', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.8.9.10', 'loopback'],
    ['::1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.9', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'metadata'],
    ['169.254.10.1', 'link-local'],
    ['fe80::1', 'link-local'],
    ['fd00:ec2::254', 'metadata'],
    ['fc00::7', 'unique-local'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['224.0.0.1', 'multicast'],
    ['ff02::1', 'multicast'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    ['255.255.255.255', 'broadcast'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:169.254.169.254', 'metadata'],
    ['::ffff:10.0.0.1', 'private'],
    ['64:ff9b::a00:1', 'rfc6052'],
    ['2002:a00:1::', '6to4'],
    ['192.0.2.10', 'reserved'],
    // IPv4-compatible IPv6 (deprecated, in the reserved ::/8): not public.
    ['::a9fe:a9fe', 'global unicast'],
    ['::7f00:1', 'global unicast'],
    ['::2', 'global unicast'],
    ['4000::1', 'global unicast'],
  ])('refuses %s (%s)', (address, kind) => {
    // Act
    const refusal = addressRefusal(address, aws);

    // Assert
    expect(refusal).toBeDefined();
    expect(refusal).toContain(kind);
  });

  it.each([
    '93.184.215.14',
    '1.1.1.1',
    '2606:4700:4700::1111',
    '::ffff:8.8.8.8',
  ])('allows the public address %s', (address) => {
    expect(addressRefusal(address, aws)).toBeUndefined();
  });

  it('allows loopback where the local stack does, and nothing else private', () => {
    // Act
    const answers = [
      '127.0.0.1',
      '::1',
      '::ffff:127.0.0.1',
      '10.0.0.1',
      '169.254.169.254',
    ].map((address) => addressRefusal(address, local));

    // Assert
    expect(answers.slice(0, 3)).toEqual([undefined, undefined, undefined]);
    expect(answers[3]).toContain('private');
    expect(answers[4]).toContain('metadata');
  });

  it.each([
    ['http://hooks.example.com/in', 'https'],
    ['ftp://hooks.example.com/in', 'https'],
    ['https://user:pw@hooks.example.com/in', 'user name or password'],
    ['https://token@hooks.example.com/in', 'user name or password'],
    ['https://hooks.example.com/in#frag', 'fragment'],
    ['https://169.254.169.254/latest/meta-data', 'metadata'],
    ['https://[fd00:ec2::254]/', 'metadata'],
    ['https://10.0.0.5/hook', 'private'],
    ['https://[::ffff:7f00:1]/hook', 'loopback'],
    ['https://127.1/hook', 'loopback'],
    // The URL parser writes [::169.254.169.254] as [::a9fe:a9fe].
    ['https://[::169.254.169.254]/', 'global unicast'],
    ['https://[::10.0.0.1]/', 'global unicast'],
    ['https://localhost/hook', 'localhost'],
    ['https://api.localhost/hook', 'localhost'],
    ['not a url', 'spaces or control characters'],
    [' https://hooks.example.com/in', 'spaces or control characters'],
    ['https://hooks.exa\tmple.com/in', 'spaces or control characters'],
    ['https://hooks.example.com/in\n', 'spaces or control characters'],
    ['https://', 'absolute URL'],
  ])('refuses %s on AWS (%s)', (url, words) => {
    expect(urlRefusal(url, aws)).toContain(words);
  });

  it('refuses a URL over 1,000 characters', () => {
    expect(
      urlRefusal(`https://hooks.example.com/${'a'.repeat(1000)}`, aws),
    ).toBe('must be at most 1,000 characters');
  });

  it('takes an https URL with a port, a path and a query on AWS', () => {
    expect(
      urlRefusal('https://hooks.example.com:8443/in/1?source=mail', aws),
    ).toBeUndefined();
    expect(urlRefusal('https://93.184.215.14/in', aws)).toBeUndefined();
  });

  it('takes http and loopback on the local stack (its inbox), still no private address', () => {
    expect(
      urlRefusal('http://127.0.0.1:3001/inbox/crm', local),
    ).toBeUndefined();
    expect(
      urlRefusal('http://localhost:3001/inbox/crm', local),
    ).toBeUndefined();
    expect(urlRefusal('http://192.168.0.10/hook', local)).toContain('private');
  });
});
