import fc from 'fast-check';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../shared/errors.ts';
import {
  hasLoneSurrogate,
  InstantWithOffset,
  InstantWithOffsetAsUtc,
  IsoDateOrInstant,
  lineText,
  multilineText,
  parse,
  parseIsoInstant,
  reservedKeyIssue,
  timeZoneName,
  utf8Bytes,
} from '../../shared/validation.ts';

/** The messages valibot gives for `input`, or [] when it passes. */
const messagesOf = (schema: v.GenericSchema, input: unknown): string[] => {
  const result = v.safeParse(schema, input);
  return result.success ? [] : result.issues.map((issue) => issue.message);
};

describe('time zones', () => {
  it('knows IANA names (case corrected, aliases kept as given) and refuses offsets and unknown names', () => {
    expect(timeZoneName('Europe/Paris')).toBe('Europe/Paris');
    expect(timeZoneName('europe/paris')).toBe('Europe/Paris');
    expect(timeZoneName('UTC')).toBe('UTC');
    expect(timeZoneName('America/Argentina/Buenos_Aires')).toBe(
      'America/Argentina/Buenos_Aires',
    );
    expect(timeZoneName('US/Eastern')).toBe('US/Eastern');
    for (const refused of ['+02:00', 'UTC+2', 'Mars/Olympus', '', '../etc']) {
      expect(timeZoneName(refused)).toBeUndefined();
    }
  });
});

describe('text primitives (limits in UTF-8 bytes)', () => {
  it('utf8Bytes counts what a stored item costs, not UTF-16 units', () => {
    expect(utf8Bytes('abc')).toBe(3);
    expect(utf8Bytes('é')).toBe(2);
    expect(utf8Bytes('€')).toBe(3);
    expect(utf8Bytes('😀')).toBe(4);
  });

  it('hasLoneSurrogate finds a surrogate without its pair, wherever it stands', () => {
    expect(hasLoneSurrogate('a\uD83D')).toBe(true);
    expect(hasLoneSurrogate('\uDE00a')).toBe(true);
    expect(hasLoneSurrogate('a\uDE00\uD83Db')).toBe(true);
    expect(hasLoneSurrogate('a😀b')).toBe(false);
    expect(hasLoneSurrogate('')).toBe(false);
  });

  it('A4: no CR, LF or NUL in a mail header: lineText refuses every line break and control character', () => {
    // Arrange
    const schema = lineText(100);
    const refused = [
      'a\rb',
      'a\nb',
      'a\r\nBcc: x@evil.test',
      'a\u0000',
      'a\tb',
      'a\u007f',
      'a\u0085b',
      'a\u009b',
      'a\u2028b',
      'a\u2029b',
    ];
    // Act
    const messages = refused.map((text) => messagesOf(schema, text));
    // Assert
    for (const message of messages) {
      expect(message).toEqual([
        'must not contain control characters or line breaks',
      ]);
    }
    expect(messagesOf(schema, 'Ann O’Brien — 😀 ünïcode')).toEqual([]);
  });

  it('lineText and multilineText refuse a lone surrogate (it would alias in reservations)', () => {
    expect(messagesOf(lineText(100), 'a\uD800')).toEqual([
      'must be valid Unicode (no lone surrogate)',
    ]);
    expect(messagesOf(multilineText(100), '\uDFFFa')).toEqual([
      'must be valid Unicode (no lone surrogate)',
    ]);
  });

  it('A7: sizes in bytes: a limit counts UTF-8 bytes, up to and including the limit', () => {
    // Arrange: 100 × "€" is 100 characters but 300 bytes.
    const line = lineText(300);
    const multiline = multilineText(300);
    // Act, Assert
    expect(messagesOf(line, '€'.repeat(100))).toEqual([]);
    expect(messagesOf(line, `${'€'.repeat(100)}a`)).toEqual([
      'must be at most 300 bytes of UTF-8',
    ]);
    expect(messagesOf(multiline, '😀'.repeat(75))).toEqual([]);
    expect(messagesOf(multiline, '😀'.repeat(76))).toEqual([
      'must be at most 300 bytes of UTF-8',
    ]);
  });

  it('multilineText keeps tabs and line breaks, and refuses other control characters', () => {
    const schema = multilineText(1000);
    expect(messagesOf(schema, '<p>\r\n\tHello\n</p>')).toEqual([]);
    for (const text of [
      'a\u0000',
      'a\u0008',
      'a\u000bb',
      'a\u000cb',
      'a\u007f',
    ]) {
      expect(messagesOf(schema, text)).toEqual([
        'must not contain control characters',
      ]);
    }
  });

  it('refuses what is not a string', () => {
    expect(messagesOf(lineText(10), 42)).toEqual(['must be a string']);
    expect(messagesOf(multilineText(10), null)).toEqual(['must be a string']);
  });

  it('parse names the field of each issue, with its location', () => {
    // Arrange
    const schema = v.object({ name: lineText(10), note: multilineText(10) });
    // Act
    const error = (() => {
      try {
        parse(schema, { name: 'a\nb', note: 'x'.repeat(11) }, 'body');
      } catch (e) {
        return e;
      }
    })();
    // Assert
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).details).toEqual([
      {
        field: 'body.name',
        message: 'must not contain control characters or line breaks',
      },
      { field: 'body.note', message: 'must be at most 10 bytes of UTF-8' },
    ]);
    expect(() => parse(schema, {})).toThrow('name: is required');
  });
});

describe('dates: impossible fields are refused, never rolled over (issue 29, defect 2)', () => {
  it('refuses 30 February, 31 April, 29 February of a common year, 24:00, 23:60, :60 and a +25:00 offset', () => {
    for (const impossible of [
      '2027-02-30T10:00Z',
      '2027-04-31T10:00:00Z',
      '2027-02-29T10:00:00Z',
      '2027-03-01T24:00Z',
      '2027-03-01T23:60Z',
      '2027-03-01T23:59:60Z',
      '2027-13-01T10:00Z',
      '2027-00-10T10:00Z',
      '2027-03-00T10:00Z',
      '2027-03-01T10:00+25:00',
      '2027-03-01T10:00+01:60',
      // Real fields, but year 10000 (or 999) once in UTC.
      '9999-12-31T23:59:59-23:59',
      '1000-01-01T00:00:00+00:01',
      '0001-01-01T00:00:00Z',
    ]) {
      expect(parseIsoInstant(impossible, { offset: 'required' })).toBe(
        undefined,
      );
      expect(messagesOf(InstantWithOffset, impossible)).not.toEqual([]);
      expect(messagesOf(IsoDateOrInstant, impossible)).not.toEqual([]);
    }
    expect(messagesOf(IsoDateOrInstant, '2027-02-30')).toEqual([
      'must be a real date (no 30 February, no 24:00), in the years 1000 to 9999',
    ]);
  });

  it('reads a leap day, offsets and fractions as the instant they name', () => {
    expect(v.parse(InstantWithOffsetAsUtc, '2028-02-29T23:30:00-01:30')).toBe(
      '2028-03-01T01:00:00.000Z',
    );
    expect(v.parse(InstantWithOffsetAsUtc, '2026-12-01T09:30+01:00')).toBe(
      '2026-12-01T08:30:00.000Z',
    );
    expect(v.parse(IsoDateOrInstant, '2026-03-01')).toBe(
      '2026-03-01T00:00:00.000Z',
    );
    // No offset: UTC, whatever the server's own time zone.
    expect(v.parse(IsoDateOrInstant, '2026-03-01T09:30:00.123456')).toBe(
      '2026-03-01T09:30:00.123Z',
    );
    expect(v.parse(IsoDateOrInstant, '2026-03-01 09:30+0200')).toBe(
      '2026-03-01T07:30:00.000Z',
    );
  });

  it('an instant with an offset is required where the field says so', () => {
    expect(messagesOf(InstantWithOffset, '2026-03-01T09:30:00')).toHaveLength(
      1,
    );
    expect(messagesOf(InstantWithOffset, '2026-03-01')).toHaveLength(1);
  });

  it('agrees with Date.parse on every real instant', () => {
    fc.assert(
      fc.property(
        fc.date({
          min: new Date('1900-01-01T00:00:00Z'),
          max: new Date('2199-12-31T23:59:59Z'),
          noInvalidDate: true,
        }),
        fc.integer({ min: -14 * 60, max: 14 * 60 }),
        (date, offsetMinutes) => {
          // The same instant written in another offset.
          const local = new Date(date.getTime() + offsetMinutes * 60_000);
          const sign = offsetMinutes < 0 ? '-' : '+';
          const abs = Math.abs(offsetMinutes);
          const offset = `${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
          const text = local.toISOString().replace('Z', offset);
          expect(parseIsoInstant(text, { offset: 'required' })).toBe(
            date.getTime(),
          );
          expect(Date.parse(text)).toBe(date.getTime());
        },
      ),
    );
  });
});

describe('reserved keys in a JSON body', () => {
  it('names the first reserved own key at any depth, arrays by index', () => {
    expect(
      reservedKeyIssue(JSON.parse('{"a":[{"b":{"__proto__":1}}]}')),
    ).toEqual({
      field: 'a.0.b.__proto__',
      message: 'is a reserved name, not allowed as a key',
    });
    expect(
      reservedKeyIssue({ fields: { plan: 'pro' }, tags: ['constructor'] }),
    ).toBeUndefined();
    expect(reservedKeyIssue('constructor')).toBeUndefined();
  });

  it('walks a body nested far past the stack without overflowing', () => {
    const deep = `${'['.repeat(200_000)}{"prototype":1}${']'.repeat(200_000)}`;
    expect(reservedKeyIssue(JSON.parse(deep))?.field).toBe(
      `${'0.'.repeat(200_000)}prototype`,
    );
  });
});
