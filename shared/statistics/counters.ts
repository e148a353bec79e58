/**
 * Application logic: the counters of mail statistics — what every
 * campaign, sequence step and organization month keeps — and what one
 * SES event adds to them, from its type and the marks its recording left
 * on its recipient (its firsts, its verdict, the earlier clicks it found
 * in a burst). A recount after a crash adds the same from the same marks,
 * so the counters stay exact. Pure functions and names: the stores keep
 * the numbers.
 */

/** The mailbox providers the figures are broken down by. */
export const MAILBOX_PROVIDERS = [
  'gmail',
  'microsoft',
  'yahoo',
  'apple',
  'other',
] as const;
export type MailboxProvider = (typeof MAILBOX_PROVIDERS)[number];

/** The counters of a campaign, a sequence step or an organization month. */
export const BASE_COUNTERS = [
  /** Messages SES took (its `Send` events). */
  'sent',
  'delivered',
  'bouncesHard',
  'bouncesSoft',
  'complaints',
  'rejected',
  'opensTotal',
  'opensUnique',
  'opensHuman',
  'opensHumanUnique',
  'opensMachine',
  'opensMachineUnique',
  'clicksTotal',
  'clicksUnique',
  'clicksHuman',
  'clicksHumanUnique',
  'clicksScanner',
  'clicksScannerUnique',
  'unsubscribes',
] as const;
export type BaseCounter = (typeof BASE_COUNTERS)[number];

/**
 * The figures kept per mailbox provider: opens and clicks are the unique
 * human ones (recipients a person opened or clicked for).
 */
export const PROVIDER_FIGURES = [
  'sent',
  'delivered',
  'bounces',
  'complaints',
  'opens',
  'clicks',
] as const;
export type ProviderFigure = (typeof PROVIDER_FIGURES)[number];

/** The counter of one figure of one provider: `gmailDelivered`. */
export type ProviderCounter = `${MailboxProvider}${Capitalize<ProviderFigure>}`;

/** The counter of one figure of one provider: `gmailDelivered`. */
export const providerCounter = (
  provider: MailboxProvider,
  figure: ProviderFigure,
): ProviderCounter =>
  `${provider}${figure.charAt(0).toUpperCase()}${figure.slice(1)}` as ProviderCounter;

/** Every counter a store keeps. */
export const COUNTER_NAMES: readonly (BaseCounter | ProviderCounter)[] = [
  ...BASE_COUNTERS,
  ...MAILBOX_PROVIDERS.flatMap((provider) =>
    PROVIDER_FIGURES.map((figure) => providerCounter(provider, figure)),
  ),
];
export type CounterName = BaseCounter | ProviderCounter;

/** The counters, summed over their shards: each 0 until counted. */
export type MailCounters = Record<CounterName, number>;

/** Every counter at 0. */
export const noCounters = (): MailCounters =>
  Object.fromEntries(COUNTER_NAMES.map((name) => [name, 0])) as MailCounters;

/** What one event adds: each counter it moves, by how much (may be < 0). */
export type CounterDeltas = Partial<Record<CounterName, number>>;

/** Adds deltas into a sum. */
export const addDeltas = (into: CounterDeltas, deltas: CounterDeltas): void => {
  for (const [name, by] of Object.entries(deltas) as [CounterName, number][]) {
    into[name] = (into[name] ?? 0) + by;
  }
};

/**
 * What the recording of one event found and decided, on its recipient:
 * kept with the event (its marker), so a recount adds the same.
 */
export interface EventMarks {
  /** The recipient's first open (a unique open). */
  open: boolean;
  /** The recipient's first click (a unique click). */
  click: boolean;
  /** The recipient's first click of this link. */
  link: boolean;
  /**
   * The verdict on an open or a click: a machine's (a scanner's click) or
   * a person's; undefined for other events, and for those recorded before
   * verdicts were kept.
   */
  machine?: boolean;
  /** The recipient's first human open; its human clicks went from 0. */
  firstHuman: boolean;
  /** The recipient's first machine open; its scanner clicks went from 0. */
  firstMachine: boolean;
  /** Earlier human clicks this click found in its burst: now a scanner's. */
  flipped: number;
  /** Those flips left the recipient no human click. */
  lostHuman: boolean;
}

/** Nothing found: no first, no verdict. */
export const NO_MARKS: EventMarks = {
  open: false,
  click: false,
  link: false,
  firstHuman: false,
  firstMachine: false,
  flipped: 0,
  lostHuman: false,
};

/**
 * The marks as letters (the first three as the older markers wrote them):
 * `o` `c` `l` firsts, `H`/`M` the verdict, `h`/`m` the first human and
 * machine, `x` the last human click lost, `f<n>` the clicks flipped.
 */
export const marksToFlags = (marks: EventMarks): string =>
  [
    marks.open ? 'o' : '',
    marks.click ? 'c' : '',
    marks.link ? 'l' : '',
    marks.machine === undefined ? '' : marks.machine ? 'M' : 'H',
    marks.firstHuman ? 'h' : '',
    marks.firstMachine ? 'm' : '',
    marks.lostHuman ? 'x' : '',
    marks.flipped > 0 ? `f${marks.flipped}` : '',
  ].join('');

/** The marks of their letters (an older marker's give the firsts alone). */
export const flagsToMarks = (flags: string): EventMarks => ({
  open: flags.includes('o'),
  click: flags.includes('c'),
  link: flags.includes('l'),
  ...(flags.includes('M')
    ? { machine: true }
    : flags.includes('H')
      ? { machine: false }
      : {}),
  firstHuman: flags.includes('h'),
  firstMachine: flags.includes('m'),
  lostHuman: flags.includes('x'),
  flipped: Number(/f(\d+)/.exec(flags)?.[1] ?? 0),
});

/** The event types that move a counter (SES's names). */
export type CountedType =
  | 'Send'
  | 'Delivery'
  | 'Bounce'
  | 'Complaint'
  | 'Reject'
  | 'Open'
  | 'Click';

const COUNTED: ReadonlySet<string> = new Set<CountedType>([
  'Send',
  'Delivery',
  'Bounce',
  'Complaint',
  'Reject',
  'Open',
  'Click',
]);

/** Whether an event of this type moves a counter. */
export const isCounted = (type: string): type is CountedType =>
  COUNTED.has(type);

/**
 * What an event adds to the counters: its type's counter, its firsts, its
 * verdict and the clicks it flipped, and its recipient's provider's
 * figures (none when the provider is unknown: an event recorded before
 * providers were kept).
 */
export const countsOf = (
  event: { type: string; bounceType?: string },
  marks: EventMarks,
  provider: MailboxProvider | undefined,
): CounterDeltas => {
  const deltas: CounterDeltas = {};
  const add = (name: CounterName, by = 1) => {
    if (by !== 0) deltas[name] = (deltas[name] ?? 0) + by;
  };
  const figure = (name: ProviderFigure, by = 1) => {
    if (provider) add(providerCounter(provider, name), by);
  };
  switch (event.type) {
    case 'Send':
      add('sent');
      figure('sent');
      break;
    case 'Delivery':
      add('delivered');
      figure('delivered');
      break;
    case 'Bounce':
      add(event.bounceType === 'Permanent' ? 'bouncesHard' : 'bouncesSoft');
      figure('bounces');
      break;
    case 'Complaint':
      add('complaints');
      figure('complaints');
      break;
    case 'Reject':
      add('rejected');
      break;
    case 'Open':
      add('opensTotal');
      if (marks.open) add('opensUnique');
      if (marks.machine === true) {
        add('opensMachine');
        if (marks.firstMachine) add('opensMachineUnique');
      } else if (marks.machine === false) {
        add('opensHuman');
        if (marks.firstHuman) {
          add('opensHumanUnique');
          figure('opens');
        }
      }
      break;
    case 'Click':
      add('clicksTotal');
      if (marks.click) add('clicksUnique');
      if (marks.machine !== undefined) {
        add(marks.machine ? 'clicksScanner' : 'clicksHuman');
        add('clicksHuman', -marks.flipped);
        add('clicksScanner', marks.flipped);
      }
      if (marks.firstHuman) {
        add('clicksHumanUnique');
        figure('clicks');
      }
      if (marks.lostHuman) {
        add('clicksHumanUnique', -1);
        figure('clicks', -1);
      }
      if (marks.firstMachine) add('clicksScannerUnique');
      break;
  }
  return deltas;
};
