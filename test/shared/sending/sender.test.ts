import fc from 'fast-check';
import libmime from 'libmime';
import { describe, expect, it } from 'vitest';
import { settingsRoutes } from '../../../functions/settings/routes.ts';
import { ValidationError } from '../../../shared/errors.ts';
import {
  displayName,
  formatSender,
  senderOf,
} from '../../../shared/sending/sender.ts';
import { UpdateSendingBody } from '../../../shared/settings/settings.ts';
import { parse } from '../../../shared/validation.ts';

const APP = 'no-reply@app.example';

const book = (senderEmail: string, senderName = 'Acme') => ({
  identities: [{ id: 'i1', senderEmail, senderName, createdAt: '' }],
  defaultId: 'i1',
  version: 1,
});

const domain = (name: string, proved: boolean) => ({
  id: name,
  domain: name,
  createdAt: '',
  dkimStatus: 'SUCCESS' as const,
  mailFromDomain: null,
  mailFromStatus: null,
  ownershipProved: proved,
  declaredAfterAnother: false,
  lastCheckedAt: null,
});

/** The body schema of a settings route. */
const bodyOf = (method: string, path: string) => {
  const found = settingsRoutes.find(
    (r) => r.method === method && r.path === path,
  );
  if (!found?.body) throw new Error(`no body schema for ${method} ${path}`);
  return found.body;
};

describe('A11: display names that SES accepts', () => {
  it.each([
    ['Café Étoile', 'é'],
    ['日本の便り', '日本'],
  ])(
    'A11: a non-ASCII sender name (%s) goes out as RFC 2047 encoded words',
    (name) => {
      // Act
      const from = formatSender({
        senderEmail: 'a@acme.test',
        senderName: name,
      });
      // Assert
      const [, phrase = ''] = /^(.*) <a@acme\.test>$/.exec(from) ?? [];
      expect(phrase).toMatch(
        /^=\?UTF-8\?[QB]\?[\x21-\x7e]+\?=( =\?[^ ]+\?=)*$/,
      );
      expect(phrase).not.toMatch(/[^\x20-\x7e]/);
      expect(libmime.decodeWords(phrase)).toBe(name);
    },
  );

  it('A11: a long non-ASCII name is split into encoded words of at most 75 characters', () => {
    const name = 'Ünïcödé '.repeat(12).trim();
    const words = displayName(name).split(' ');
    expect(words.length).toBeGreaterThan(1);
    for (const word of words) expect(word.length).toBeLessThanOrEqual(75);
    expect(libmime.decodeWords(displayName(name))).toBe(name);
  });

  it('A11: any name beyond ASCII (astral characters, combining marks, emoji) becomes printable encoded words of at most 75 characters that decode to it', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'binary', minLength: 1, maxLength: 120 }),
        (raw) => {
          // Names are one line: controls never reach here (lineText).
          // biome-ignore lint/suspicious/noControlCharactersInRegex: this regex removes them
          const name = `é${raw.replace(/[\u0000-\u001f\u007f-\u009f]/g, '')}`;
          fc.pre(
            !/[\uD800-\uDFFF]/.test(
              name.replace(/[\uD800-\uDBFF][\uDC00-\uDFFF]/g, ''),
            ),
          );
          const encoded = displayName(name);
          for (const word of encoded.split(' ')) {
            expect(word).toMatch(/^=\?UTF-8\?B\?[A-Za-z0-9+/=]+\?=$/);
            expect(word.length).toBeLessThanOrEqual(75);
          }
          expect(libmime.decodeWords(encoded)).toBe(name);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('A11: an ASCII name is quoted, with " and \\ escaped (RFC 5322)', () => {
    expect(displayName('Acme, Inc.')).toBe('"Acme, Inc."');
    expect(displayName('Say "hi" \\o/')).toBe('"Say \\"hi\\" \\\\o/"');
  });

  it.each([
    ['CR', 'Acme\rBcc: x@evil.test'],
    ['LF', 'Acme\nBcc: x@evil.test'],
    ['NUL', 'Acme\u0000'],
    ['U+0085', 'Acme\u0085News'],
    ['U+2028', 'Acme\u2028News'],
    ['tab', 'Acme\tNews'],
  ])(
    'A11: a sender name with %s is refused, naming the field',
    (_, senderName) => {
      const schemas = [
        UpdateSendingBody,
        bodyOf('POST', '/settings/identities'),
        bodyOf('PATCH', '/settings/identities/{identityId}'),
      ];
      for (const schema of schemas) {
        const error = (() => {
          try {
            parse(schema, { senderEmail: 'a@acme.test', senderName });
          } catch (e) {
            return e;
          }
        })();
        expect(error).toBeInstanceOf(ValidationError);
        expect((error as ValidationError).details.map((d) => d.field)).toEqual([
          'senderName',
        ]);
      }
    },
  );
});

describe('A2: the sender of every send', () => {
  const facts = {
    orgId: 'o1',
    provisioned: true,
    appFromAddress: APP,
  };

  it('A2: until the address is on a domain the organization proved, mail goes out From the application address, the address in Reply-To', () => {
    expect(
      senderOf({
        ...facts,
        book: book('ceo@bank.example', 'Security Team'),
        domains: [domain('bank.example', false)],
      }),
    ).toEqual({
      from: `"Security Team" <${APP}>`,
      replyTo: 'ceo@bank.example',
    });
  });

  it('A2: an address on a verified domain of the organization signs, through its tenant', () => {
    expect(
      senderOf({
        ...facts,
        book: book('news@mail.acme.example'),
        domains: [domain('acme.example', true)],
      }),
    ).toEqual({
      from: '"Acme" <news@mail.acme.example>',
      tenantName: 'org-o1',
    });
  });

  it('A2: an empty address book sends as the bare application address', () => {
    expect(
      senderOf({
        ...facts,
        book: { identities: [], version: 0 },
        domains: [],
      }),
    ).toEqual({ from: APP });
  });
});
