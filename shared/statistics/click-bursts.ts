/**
 * Application logic: clicks judged with the recipient's other clicks. A
 * scanner follows every link of a message at once; a person clicks one,
 * reads, maybe clicks another. So a click that makes three different
 * links clicked within 2 s of one another is a burst: it and every click
 * of that burst are a scanner's, the earlier ones taken back from the
 * human figures. Each recipient keeps its recent clicks (time, link,
 * verdict) and its human and scanner click counts; SES's events may come
 * in any order, and the burst is found whichever comes last.
 */
import type { EventMarks } from './counters.ts';

/** Different links clicked within the window that make a burst. */
export const BURST_LINKS = 3;

/** How close to one another a burst's clicks are. */
export const BURST_WINDOW_MS = 2_000;

/**
 * Clicks a recipient keeps, its most recent by time: a burst is seconds
 * long, and a recipient's item stays small (each entry is ~20 bytes).
 */
export const CLICK_HISTORY_LIMIT = 24;

/** What a recipient remembers of its clicks. */
export interface ClickHistory {
  /** `<epoch ms, base 36>:<link key>:<h|s>`, oldest first. */
  entries: readonly string[];
  /** Its clicks counted a person's. */
  human: number;
  /** Its clicks counted a scanner's. */
  scanner: number;
}

/** No click yet. */
export const NO_CLICKS: ClickHistory = { entries: [], human: 0, scanner: 0 };

interface Entry {
  at: number;
  link: string;
  scanner: boolean;
}

const parseEntry = (entry: string): Entry => {
  const [at = '', link = '', verdict = ''] = entry.split(':');
  return { at: Number.parseInt(at, 36), link, scanner: verdict === 's' };
};

const formatEntry = (entry: Entry): string =>
  `${entry.at.toString(36)}:${entry.link}:${entry.scanner ? 's' : 'h'}`;

/** The click to judge: when, which link (a short key), its own verdict. */
export interface Click {
  /** Epoch milliseconds. */
  at: number;
  /** A short key of the link: different links, different keys. */
  link: string;
  /** Already a scanner's on its own (`judgeClick`). */
  scanner: boolean;
}

/**
 * Records a click in its recipient's history: whether it is a scanner's
 * (on its own, or in a burst), the earlier human clicks its burst flips,
 * and the marks its counts follow (`countsOf`).
 */
export const recordClick = (
  history: ClickHistory,
  click: Click,
): {
  history: ClickHistory;
  marks: Pick<
    EventMarks,
    'machine' | 'firstHuman' | 'firstMachine' | 'flipped' | 'lostHuman'
  >;
} => {
  const entries = history.entries.map(parseEntry);
  const near = entries.filter(
    (entry) => Math.abs(entry.at - click.at) <= BURST_WINDOW_MS,
  );
  const links = new Set([click.link, ...near.map((entry) => entry.link)]);
  const burst = links.size >= BURST_LINKS;
  const scanner = click.scanner || burst;
  let flipped = 0;
  if (burst) {
    for (const entry of near) {
      if (!entry.scanner) {
        entry.scanner = true;
        flipped++;
      }
    }
  }
  const human = history.human - flipped + (scanner ? 0 : 1);
  const scanned = history.scanner + flipped + (scanner ? 1 : 0);
  const kept = [...entries, { at: click.at, link: click.link, scanner }]
    .sort((a, b) => a.at - b.at)
    .slice(-CLICK_HISTORY_LIMIT);
  return {
    history: {
      entries: kept.map(formatEntry),
      human,
      scanner: scanned,
    },
    marks: {
      machine: scanner,
      firstHuman: history.human === 0 && human > 0,
      firstMachine: history.scanner === 0 && scanned > 0,
      flipped,
      lostHuman: history.human > 0 && human === 0,
    },
  };
};
