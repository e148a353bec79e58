/**
 * The webhooks page says what the code does: its table of event types is
 * the catalogue (`WEBHOOK_EVENTS`), type for type and word for word.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { WEBHOOK_EVENTS } from '../../../shared/webhooks/events.ts';

const page = readFileSync(
  new URL('../../../docs/features/webhooks.md', import.meta.url),
  'utf8',
);

/** The rows between the page's `events` markers, as [type, meaning]. */
const documented = (): [string, string][] => {
  const start = page.indexOf('<!-- events:start -->');
  const end = page.indexOf('<!-- events:end -->');
  return page
    .slice(start, end)
    .split('\n')
    .filter((line) => /^\| `/.test(line))
    .map((line) => {
      const [, type = '', meaning = ''] = line
        .split('|')
        .map((cell) => cell.trim());
      return [type.replaceAll('`', ''), meaning];
    });
};

describe('the webhooks page', () => {
  it('lists every event type of the catalogue, in its order, with its meaning', () => {
    // Act
    const rows = documented();

    // Assert
    expect(rows).toEqual(Object.entries(WEBHOOK_EVENTS));
  });
});
