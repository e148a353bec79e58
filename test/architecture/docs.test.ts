/**
 * The README is the door and `docs/` holds the rest: every folder of
 * `shared/` has a row in the README's area table, every relative link of
 * the README and of `docs/` leads to a file of the repository (and, when it
 * names one, to a heading of that file, by GitHub's anchors), and every page
 * of `docs/` is linked from another page.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** A Markdown file, by its path from the repository's root. */
interface Page {
  path: string;
  text: string;
}

const read = (path: string): Page => ({
  path,
  text: readFileSync(join(ROOT, path), 'utf8'),
});

/** Every `.md` file below `folder`, by path from the root. */
const markdownBelow = (folder: string): string[] =>
  readdirSync(join(ROOT, folder), { withFileTypes: true }).flatMap((entry) => {
    const path = `${folder}/${entry.name}`;
    if (entry.isDirectory()) return markdownBelow(path);
    return entry.name.endsWith('.md') ? [path] : [];
  });

/** The lines of a page outside fenced code blocks, with their numbers. */
const proseLines = (text: string): { line: string; number: number }[] => {
  let fenced = false;
  return text.split('\n').flatMap((line, index) => {
    if (/^\s*(```|~~~)/.test(line)) {
      fenced = !fenced;
      return [];
    }
    return fenced ? [] : [{ line, number: index + 1 }];
  });
};

/**
 * The anchor GitHub gives a heading: its text as rendered (link targets and
 * code marks dropped), lower-cased, without punctuation or symbols but `-`
 * and `_`, spaces made hyphens.
 */
const slugOf = (heading: string): string =>
  heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');

/** The anchors of a page's headings; a repeated one gets `-1`, `-2`… */
const anchorsOf = (text: string): Set<string> => {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const { line } of proseLines(text)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const slug = slugOf(heading[1] ?? '');
    const count = seen.get(slug) ?? 0;
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
    seen.set(slug, count + 1);
  }
  return anchors;
};

/** The link targets of a page's prose, code spans left out. */
const linksOf = (page: Page): { target: string; number: number }[] =>
  proseLines(page.text).flatMap(({ line, number }) =>
    [
      ...line
        .replace(/`[^`]*`/g, '')
        .matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g),
    ].map((match) => ({ target: match[1] ?? '', number })),
  );

const isExternal = (target: string): boolean =>
  /^[a-z][a-z0-9+.-]*:/i.test(target);

/**
 * What is wrong with each relative link of `pages`: a file that does not
 * exist or lies outside the repository, or an anchor that no heading of
 * the Markdown file it names makes.
 */
const brokenLinks = (pages: Page[]): string[] =>
  pages.flatMap((page) =>
    linksOf(page).flatMap(({ target, number }) => {
      if (isExternal(target)) return [];
      const where = `${page.path}:${number} → ${target}`;
      const [file = '', anchor] = target.split('#');
      const path = file
        ? relative(ROOT, resolve(ROOT, dirname(page.path), decodeURI(file)))
        : page.path;
      if (path.startsWith('..') || path.startsWith(sep)) {
        return [`${where}: outside the repository`];
      }
      if (!existsSync(join(ROOT, path))) return [`${where}: no such file`];
      if (anchor === undefined || !path.endsWith('.md')) return [];
      const anchors = anchorsOf(read(path).text);
      return anchors.has(decodeURIComponent(anchor))
        ? []
        : [`${where}: no heading makes #${anchor}`];
    }),
  );

/**
 * The `shared/<area>` names of the README's area table: the first column of
 * the table whose header starts with `area`.
 */
const areasInTable = (readme: string): string[] | undefined => {
  const lines = proseLines(readme).map(({ line }) => line.trim());
  const header = lines.findIndex((line) => /^\|\s*area\s*\|/i.test(line));
  if (header < 0) return undefined;
  const rows: string[] = [];
  for (const line of lines.slice(header + 2)) {
    if (!line.startsWith('|')) break;
    rows.push(line.split('|')[1] ?? '');
  }
  return rows.flatMap((cell) =>
    [...cell.matchAll(/shared\/([\w-]+)/g)].map((match) => match[1] ?? ''),
  );
};

const sharedFolders = (): string[] =>
  readdirSync(join(ROOT, 'shared'), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();

const docsPages = (): Page[] =>
  ['README.md', ...markdownBelow('docs')].map(read);

describe('the README and docs/', () => {
  it('names every folder of shared/ in the README area table', () => {
    // Arrange
    const readme = read('README.md').text;

    // Act
    const named = new Set(areasInTable(readme) ?? []);
    const missing = sharedFolders().filter((area) => !named.has(area));

    // Assert
    expect(
      areasInTable(readme),
      'a table whose header starts "| area |"',
    ).toBeDefined();
    expect(named.size).toBeGreaterThan(0);
    expect(missing.map((area) => `shared/${area}`)).toEqual([]);
  });

  it('leads every relative link to a file and every anchor to a heading', () => {
    // Arrange
    const pages = docsPages();

    // Act
    const broken = brokenLinks(pages);

    // Assert
    expect(pages.length).toBeGreaterThan(10);
    expect(broken).toEqual([]);
  });

  it('links every page of docs/ from another page', () => {
    // Arrange
    const pages = docsPages();
    const linked = new Set(
      pages.flatMap((page) =>
        linksOf(page)
          .filter(({ target }) => !isExternal(target))
          .map(({ target }) => target.split('#')[0] ?? '')
          .filter((file) => file !== '')
          .map((file) =>
            relative(ROOT, resolve(ROOT, dirname(page.path), file)),
          ),
      ),
    );

    // Act
    const orphans = pages
      .map((page) => page.path)
      .filter((path) => path !== 'README.md' && !linked.has(path));

    // Assert
    expect(orphans).toEqual([]);
  });
});

describe('the link check', () => {
  it('makes heading anchors as GitHub does', () => {
    // Act
    const slugs = [
      "SES's events",
      'Pacing and senders: `npm run bench:scale`',
      'Isolation (SES tenants)',
      'Hot keys: one campaign at 1,000 mails a second',
      '`org recount`: the repair',
      'Big-list goals (issue 28, goals 5 and 8), met or not',
      'A [linked](x.md) heading',
    ].map(slugOf);

    // Assert
    expect(slugs).toEqual([
      'sess-events',
      'pacing-and-senders-npm-run-benchscale',
      'isolation-ses-tenants',
      'hot-keys-one-campaign-at-1000-mails-a-second',
      'org-recount-the-repair',
      'big-list-goals-issue-28-goals-5-and-8-met-or-not',
      'a-linked-heading',
    ]);
  });

  it('numbers repeated headings and ignores headings in code', () => {
    // Arrange
    const text = '# Notes\n\n## Notes\n\n```\n# not a heading\n```\n';

    // Act
    const anchors = anchorsOf(text);

    // Assert
    expect([...anchors]).toEqual(['notes', 'notes-1']);
  });

  it('reports a missing file, a missing anchor and a link outside', () => {
    // Arrange
    const page: Page = {
      path: 'docs/example.md',
      text: [
        '[ok](../README.md#the-areas) [web](https://example.com)',
        '[gone](missing.md) [bad anchor](../README.md#no-such-heading)',
        '[outside](../../elsewhere.md) `[in code](missing.md)`',
      ].join('\n'),
    };

    // Act
    const broken = brokenLinks([page]);

    // Assert
    expect(broken).toEqual([
      'docs/example.md:2 → missing.md: no such file',
      'docs/example.md:2 → ../README.md#no-such-heading: no heading makes #no-such-heading',
      'docs/example.md:3 → ../../elsewhere.md: outside the repository',
    ]);
  });

  it('reads the areas of the area table only', () => {
    // Arrange
    const readme = [
      '| layer | folder |',
      '|---|---|',
      '| domain | `shared/other` |',
      '',
      '| area | docs |',
      '|---|---|',
      '| [`shared/access`](shared/access/) | [x](docs/x.md) |',
      '| `shared/db` | — |',
      '',
      'After the table, `shared/later`.',
    ].join('\n');

    // Act
    const areas = areasInTable(readme);

    // Assert
    expect(new Set(areas)).toEqual(new Set(['access', 'db']));
  });
});
