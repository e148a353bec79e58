import { describe, expect, it } from 'vitest';
import {
  contactInEmail,
  contactInName,
  contactInNames,
} from '../../../shared/signup/form-names.ts';

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

  it('reads a name as the eye does: other full stops, full-width forms, invisible characters and any digits or dashes do not slip through, and a direction override is refused', () => {
    for (const disguised of [
      'evil\u3002com',
      'evil\uff0ecom',
      'evil.\uff43\uff4f\uff4d',
      'evil\u2024com',
      'evil.co\u00adm',
      'evil.c\u200bom',
      'http:evil.com',
      '1.1.1.1/x',
      '800\u2013555\u20130100',
      '800\u2212555\u22120100',
      '800_555_0100',
      '\uff18\uff10\uff10\uff15\uff15\uff15\uff10\uff11\uff10\uff10',
    ]) {
      expect(contactInName(disguised), disguised).toBeDefined();
    }
    expect(contactInName('\u202emoc.rekcah')).toBe('a direction override');
    // Each half alone is a name; together a number.
    expect(contactInName('Call 800 55')).toBeUndefined();
    expect(contactInNames(['Call 800 55', '5 0100'])).toBe('a phone number');
  });

  it('judges the subaddress of an email (after +) for web addresses, and nothing else of it', () => {
    expect(contactInEmail('victim+visit-www.evil.com-now@victim.example')).toBe(
      'a web address',
    );
    expect(contactInEmail('ann+evil.com@example.com')).toBe('a web address');
    for (const fine of [
      'john1234567@gmail.com',
      'maria.de@example.com',
      'ann+news@example.com',
      'ann+2026@example.com',
    ]) {
      expect(contactInEmail(fine), fine).toBeUndefined();
    }
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
      // A zero-width non-joiner belongs in Persian names.
      'محمد\u200cعلی',
    ]) {
      expect(contactInName(name), name).toBeUndefined();
    }
  });
});
