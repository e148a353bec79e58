import { describe, expect, it } from 'vitest';
import { contactInName } from '../../../shared/signup/form-names.ts';

describe('names typed on a public form (issue 29, defect 1)', () => {
  it('refuses a name carrying a web address, www., an @ or a phone-like run, saying which', () => {
    expect(contactInName('WIN $500 now: https://evil.example/claim')).toBe(
      'a web address',
    );
    expect(contactInName('bit.ly')).toBe('a web address');
    expect(contactInName('see www.prizes')).toBe('www.');
    expect(contactInName('win@evil')).toBe('an @');
    expect(contactInName('+44 20 7946 0958')).toBe('a phone number');
    expect(contactInName('0800.123.456')).toBe('a phone number');
  });

  it('takes names of every kind, with initials, hyphens, apostrophes, titles and short numbers', () => {
    for (const name of [
      'Ada',
      'Jean-Paul',
      "O'Brien",
      'J.R.R. Tolkien',
      'Mary.Ann',
      'St. John',
      'Ana María',
      'Louis XIV',
      'Henry 8th',
      '山田 太郎',
      'Zoë',
    ]) {
      expect(contactInName(name), name).toBeUndefined();
    }
  });
});
