/**
 * "How does a mail leave, and what stops it?" has one answer: `shared/mail/`.
 * The domain reaches the provider's mailer only through it (`sendPaced` for
 * sends to contacts, `sendNow` for one address); the other areas name the
 * mailer only in the dependencies they pass on (`Pick<…, 'mailer'>`).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/** The domain's source files: not mail itself, nor the adapters and runtimes. */
const domainFiles = (): string[] =>
  readdirSync('shared', { recursive: true, encoding: 'utf8' })
    .map((file) => join('shared', file))
    .filter(
      (file) =>
        file.endsWith('.ts') &&
        !/^shared\/(?:mail|adapters|runtime)\//.test(file),
    );

/** Lines that use the mailer as a value, comments and quoted names aside. */
const mailerUses = (source: string): string[] =>
  source
    .split('\n')
    .map((line) => line.replace(/\/\/.*$/, ''))
    .filter((line) => !/^\s*\*/.test(line))
    .filter((line) => /(?<!['"])\bmailer\b(?!['"])/.test(line));

describe('one home for one email out', () => {
  it('finds the mailer where it is used (the check can fail)', () => {
    expect(mailerUses('  await deps.mailer.send({ to });')).toHaveLength(1);
    expect(mailerUses('  const { mailer } = deps;')).toHaveLength(1);
    expect(mailerUses("  Pick<Deps, 'mailer' | 'clock'>,")).toEqual([]);
    expect(mailerUses('   * the mailer is called here')).toEqual([]);
  });

  it('only shared/mail/ calls the mailer; shared/ports.ts declares it', () => {
    const uses = domainFiles().flatMap((file) =>
      mailerUses(readFileSync(file, 'utf8')).map(
        (line) => `${file}: ${line.trim()}`,
      ),
    );
    expect(uses).toEqual(['shared/ports.ts: mailer: Mailer;']);
  });
});
