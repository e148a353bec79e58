/**
 * Application logic: the figures of mail statistics as the API shows them
 * — opens and clicks split into a person's and a machine's, the rates
 * over the human ones, the breakdown by mailbox provider — from the
 * counters. Shared by the statistics of a campaign, of a sequence's steps
 * and of an organization, so each reads the same.
 */
import * as v from 'valibot';
import { Count } from '../validation.ts';
import {
  MAILBOX_PROVIDERS,
  type MailboxProvider,
  type MailCounters,
  providerCounter,
} from './counters.ts';
import type { LinkClicks } from './ports.ts';

/** A count, described. */
export const counted = (description: string) =>
  v.pipe(Count, v.description(description));

/** A rate, described. */
export const Rate = (description: string) =>
  v.pipe(
    v.number(),
    v.minValue(0),
    v.maxValue(1),
    v.description(`${description}; 0 to 1, to 4 decimals, 0 when none`),
  );

/**
 * `part / whole`, rounded to 4 decimals, at most 1 (events can outrun
 * their denominator: a delivery SES never reported, a click without an
 * open), 0 when `whole` is 0.
 */
export const rate = (part: number, whole: number): number =>
  whole > 0 ? Math.round(Math.min(1, part / whole) * 10_000) / 10_000 : 0;

const MACHINE_OPENS =
  "Apple Mail Privacy Protection's prefetch, security scanners' networks and user agents, and any open within 3 s of delivery";

const SCANNER_CLICKS =
  "Security scanners' networks and user agents, any click within 10 s of delivery, and every click of a burst (3 different links clicked within 2 s)";

/** Opens: every one, and a person's and a machine's apart. */
export const OpensView = v.pipe(
  v.object({
    total: counted('Every open, each recipient as often as it opened'),
    unique: counted('Recipients who opened at least once'),
    human: v.pipe(
      v.object({
        total: counted('Opens a person made'),
        unique: counted('Recipients a person opened for at least once'),
      }),
      v.description(
        "Opens by a person: every open that is not a machine's. Gmail's and Yahoo's image proxies load the pixel when the person opens the message, so their opens count here (unless within 3 s of delivery)",
      ),
    ),
    machine: v.pipe(
      v.object({
        total: counted('Opens a machine made'),
        unique: counted('Recipients a machine opened for at least once'),
      }),
      v.description(`Opens by a machine, not a reader: ${MACHINE_OPENS}`),
    ),
  }),
  v.description(
    'Opens, as the tracking image sees them: mail clients that load images ahead (Apple Mail Privacy Protection) count in total and unique, those that block images do not. `human` and `machine` split them (an extension); opens counted before the split are in neither',
  ),
);
export type OpensView = v.InferOutput<typeof OpensView>;

/** A clicked link and its clicks. */
export const LinkView = v.object({
  url: v.pipe(
    v.string(),
    v.description(
      'The link (our unsubscribe and topic opt-out links without their per-recipient token)',
    ),
  ),
  total: counted('Clicks on this link, scanners’ included'),
  unique: counted('Recipients who clicked this link'),
});

/** Clicks, every one, and a person's and a scanner's apart. */
const clickTotalsEntries = {
  total: counted('Every click on a tracked link'),
  unique: counted('Recipients who clicked at least once'),
  human: v.pipe(
    v.object({
      total: counted('Clicks a person made'),
      unique: counted('Recipients a person clicked for at least once'),
    }),
    v.description("Clicks by a person: every click that is not a scanner's"),
  ),
  scanner: v.pipe(
    v.object({
      total: counted('Clicks a scanner made'),
      unique: counted('Recipients a scanner clicked for at least once'),
    }),
    v.description(
      `Clicks by a security scanner, flagged apart (an extension): ${SCANNER_CLICKS}. A click first counted a person's moves here when its burst shows`,
    ),
  ),
};

/** The clicks of messages, without their links. */
export const ClickTotalsView = v.object(clickTotalsEntries);

/** The clicks of a message's links, split as opens are. */
export const ClicksView = v.object({
  ...clickTotalsEntries,
  links: v.pipe(
    v.array(LinkView),
    v.description('Each clicked link, most clicked first'),
  ),
});

/** Whose opens and clicks the rates count. */
export const RatesBasis = v.pipe(
  v.picklist(['human', 'all']),
  v.description(
    '`human`: the open, click and click-to-open rates count the opens and clicks of a person (`opens.human`, `clicks.human`); `all`: every open and click, for statistics counted before the split (no open or click of theirs was classified)',
  ),
);

/** The rates of mail statistics that every kind of statistics has. */
export const ratesEntries = {
  open: Rate(
    'Recipients a person opened for over delivered (`opens.human.unique / delivered`; `opens.unique` when `basis` is all)',
  ),
  click: Rate(
    'Recipients a person clicked for over delivered (`clicks.human.unique / delivered`; `clicks.unique` when `basis` is all)',
  ),
  clickToOpen: Rate(
    'Human unique clicks over human unique opens (at most 1: a reader who blocks images, or reads in Apple Mail, clicks without a human open)',
  ),
  bounce: Rate('Bounces, hard and soft, over sent'),
  complaint: Rate('Complaints over delivered'),
  basis: RatesBasis,
};

/** One mailbox provider's figures. */
export const ProviderFiguresView = v.object({
  sent: counted('Messages SES took for its recipients'),
  delivered: counted('Messages its servers accepted'),
  bounces: counted('Bounces, hard and soft'),
  complaints: counted('Complaints (feedback loops)'),
  opens: counted('Recipients a person opened for (machine opens left out)'),
  clicks: counted('Recipients a person clicked for (scanner clicks left out)'),
  rates: v.object({
    bounce: Rate('Bounces over sent'),
    complaint: Rate('Complaints over delivered'),
    open: Rate('Human unique opens over delivered'),
    click: Rate('Human unique clicks over delivered'),
  }),
});
export type ProviderFiguresView = v.InferOutput<typeof ProviderFiguresView>;

/** The figures of each mailbox provider. */
export const ByProviderView = v.pipe(
  v.object(
    Object.fromEntries(
      MAILBOX_PROVIDERS.map((provider) => [provider, ProviderFiguresView]),
    ) as Record<MailboxProvider, typeof ProviderFiguresView>,
  ),
  v.description(
    "By the recipient's mailbox provider (an extension): Gmail (and Google Workspace), Microsoft (Outlook.com, Hotmail, Live, MSN, Microsoft 365), Yahoo (and AOL), Apple (iCloud), others; from the address's domain, or for another domain its MX. Counted from the events recorded since the breakdown exists",
  ),
);
export type ByProviderView = v.InferOutput<typeof ByProviderView>;

/** The opens of the counters. */
export const opensOf = (c: MailCounters): OpensView => ({
  total: c.opensTotal,
  unique: c.opensUnique,
  human: { total: c.opensHuman, unique: c.opensHumanUnique },
  machine: { total: c.opensMachine, unique: c.opensMachineUnique },
});

/** The clicks of the counters. */
export const clickTotalsOf = (
  c: MailCounters,
): v.InferOutput<typeof ClickTotalsView> => ({
  total: c.clicksTotal,
  unique: c.clicksUnique,
  human: { total: c.clicksHuman, unique: c.clicksHumanUnique },
  scanner: { total: c.clicksScanner, unique: c.clicksScannerUnique },
});

/** The clicks of the counters and links, most clicked first. */
export const clicksOf = (
  c: MailCounters,
  links: readonly LinkClicks[],
): v.InferOutput<typeof ClicksView> => ({
  ...clickTotalsOf(c),
  links: links
    .map((link) => ({
      url: link.url,
      total: link.clicksTotal,
      unique: link.clicksUnique,
    }))
    .sort(
      (a, b) =>
        b.total - a.total || b.unique - a.unique || a.url.localeCompare(b.url),
    ),
});

/**
 * Whose opens and clicks the rates count: a person's, unless the counters
 * hold opens or clicks and none was classified (counted before the split).
 */
export const basisOf = (c: MailCounters): 'human' | 'all' => {
  const classified =
    c.opensHuman + c.opensMachine + c.clicksHuman + c.clicksScanner;
  return classified === 0 && c.opensTotal + c.clicksTotal > 0 ? 'all' : 'human';
};

/** The rates every kind of statistics has; bounces over `sent`. */
export const ratesOf = (c: MailCounters, sent: number) => {
  const basis = basisOf(c);
  const opened = basis === 'human' ? c.opensHumanUnique : c.opensUnique;
  const clicked = basis === 'human' ? c.clicksHumanUnique : c.clicksUnique;
  return {
    open: rate(opened, c.delivered),
    click: rate(clicked, c.delivered),
    clickToOpen: rate(clicked, opened),
    bounce: rate(c.bouncesHard + c.bouncesSoft, sent),
    complaint: rate(c.complaints, c.delivered),
    basis,
  };
};

/** The figures of each provider, from the counters. */
export const byProviderOf = (c: MailCounters): ByProviderView =>
  Object.fromEntries(
    MAILBOX_PROVIDERS.map((provider) => {
      const of = (figure: Parameters<typeof providerCounter>[1]) =>
        c[providerCounter(provider, figure)];
      const delivered = of('delivered');
      return [
        provider,
        {
          sent: of('sent'),
          delivered,
          bounces: of('bounces'),
          complaints: of('complaints'),
          opens: of('opens'),
          clicks: of('clicks'),
          rates: {
            bounce: rate(of('bounces'), of('sent')),
            complaint: rate(of('complaints'), delivered),
            open: rate(of('opens'), delivered),
            click: rate(of('clicks'), delivered),
          },
        },
      ];
    }),
  ) as ByProviderView;

/** Bounces, hard and soft. */
export const BouncesView = v.pipe(
  v.object({
    hard: counted(
      'Permanent bounces: the address is suppressed, nothing is sent to it again',
    ),
    soft: counted(
      'Transient and undetermined bounces (a full mailbox, a message too large…): the address stays',
    ),
    total: counted('Hard and soft bounces'),
  }),
  v.description('Messages the receiving side returned'),
);

/** The bounces of the counters. */
export const bouncesOf = (c: MailCounters) => ({
  hard: c.bouncesHard,
  soft: c.bouncesSoft,
  total: c.bouncesHard + c.bouncesSoft,
});
