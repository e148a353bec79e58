/**
 * Reputation model: an organization's hard bounce and complaint rates over
 * a rolling window of its recent sends, the thresholds past which its
 * sending stops (its guardrail), and the guardrail's state. Pure: the
 * counting is in `reputation.ts`, the storage behind `ports.ts`.
 *
 * Why these figures (decision 0061): the provider reviews an account at
 * 5 % bounces or 0.1 % complaints and pauses it at 10 % or 0.5 %; one
 * tenant past those puts every other tenant's mail at risk. Ours pause the
 * tenant well before review, once the window holds enough mail for a rate
 * to mean something.
 */

/** What one hour (or a window) of an organization's mail counted. */
export interface ReputationCounts {
  /** Messages the provider took (SES `Send` events). */
  sends: number;
  /** Permanent bounces (SES `Bounce`, `bounceType: Permanent`). */
  hardBounces: number;
  /** Complaints (SES `Complaint`, feedback loops). */
  complaints: number;
}

export const NO_COUNTS: ReputationCounts = {
  sends: 0,
  hardBounces: 0,
  complaints: 0,
};

/** One hour's counters, by its key (`2026-11-23T14`, UTC). */
export interface HourCounts {
  hour: string;
  counts: ReputationCounts;
}

/**
 * When an organization's sending stops: a rate at or above its threshold,
 * once the window holds the minimum volume and the minimum count.
 */
export interface ReputationThresholds {
  /** Hard bounces over sends at which sending stops (0.04: 4 %). */
  bounceRate: number;
  /** Complaints over sends at which sending stops (0.0008: 0.08 %). */
  complaintRate: number;
  /** Sends the window must hold before either rate counts. */
  minSends: number;
  /** Hard bounces the window must hold before the bounce rate counts. */
  minBounces: number;
  /** Complaints the window must hold before the complaint rate counts. */
  minComplaints: number;
  /** The window: the last this many hours (this one included)… */
  windowHours: number;
  /** …stretched back hour by hour, up to this many, until `minSends`. */
  longestWindowHours: number;
}

/**
 * Our thresholds (decision 0061): below the provider's review (5 %,
 * 0.1 %), a fifth of its pause (10 %, 0.5 %) for complaints and under half
 * for bounces; over the last 24 hours, or up to 7 days until 1,000 sends;
 * and never on fewer than 10 bounces or 2 complaints.
 */
export const DEFAULT_REPUTATION_THRESHOLDS: ReputationThresholds = {
  bounceRate: 0.04,
  complaintRate: 0.0008,
  minSends: 1000,
  minBounces: 10,
  minComplaints: 2,
  windowHours: 24,
  longestWindowHours: 168,
};

/** The provider's own thresholds (SES), shown beside ours. */
export const PROVIDER_THRESHOLDS = {
  review: { bounceRate: 0.05, complaintRate: 0.001 },
  pause: { bounceRate: 0.1, complaintRate: 0.005 },
} as const;

/**
 * Reads the operator's override (`REPUTATION_GUARDRAIL`): comma-separated
 * `name=value` pairs of `ReputationThresholds`, each optional, e.g.
 * `bounceRate=0.03,minSends=5000`. Throws naming a bad pair: a
 * misconfigured function fails at its cold start.
 */
export const thresholdsFrom = (
  text: string | undefined,
): ReputationThresholds => {
  const thresholds = { ...DEFAULT_REPUTATION_THRESHOLDS };
  if (!text?.trim()) return thresholds;
  for (const pair of text.split(',')) {
    const [name = '', value = ''] = pair.split('=').map((s) => s.trim());
    const number = Number(value);
    if (!(name in thresholds) || value === '' || !Number.isFinite(number)) {
      throw new Error(
        `Invalid configuration: REPUTATION_GUARDRAIL: "${pair}" is not name=number of ${Object.keys(thresholds).join(', ')}`,
      );
    }
    const isRate = name === 'bounceRate' || name === 'complaintRate';
    if (
      number < 0 ||
      (isRate ? number > 1 : !Number.isInteger(number)) ||
      (name.endsWith('Hours') && (number < 1 || number > 168))
    ) {
      throw new Error(
        `Invalid configuration: REPUTATION_GUARDRAIL: ${name} out of range (${value})`,
      );
    }
    thresholds[name as keyof ReputationThresholds] = number;
  }
  if (thresholds.longestWindowHours < thresholds.windowHours) {
    throw new Error(
      'Invalid configuration: REPUTATION_GUARDRAIL: longestWindowHours is below windowHours',
    );
  }
  return thresholds;
};

/** The hour key of an instant (UTC): `2026-11-23T14`. */
export const hourOf = (at: Date): string => at.toISOString().slice(0, 13);

/** The hour key `hours` hours before `now`'s. */
export const hoursBefore = (now: Date, hours: number): string =>
  hourOf(new Date(now.getTime() - hours * 3_600_000));

/** An organization's window: its counts and how many hours it spans. */
export interface ReputationWindow extends ReputationCounts {
  hours: number;
  bounceRate: number;
  complaintRate: number;
}

/** `part / whole` to 4 decimals (0 when whole is 0). */
const rateOf = (part: number, whole: number): number =>
  whole > 0 ? Math.round((part / whole) * 10_000) / 10_000 : 0;

/**
 * The window of the counters read (any order, at most the longest window
 * back): the last `windowHours` hours, stretched back an hour at a time
 * while it holds fewer than `minSends` sends, up to `longestWindowHours`.
 * A quiet tenant is judged on its last week; a busy one on its last day.
 */
export const windowOf = (
  read: readonly HourCounts[],
  now: Date,
  thresholds: ReputationThresholds,
): ReputationWindow => {
  const byHour = new Map(read.map((h) => [h.hour, h.counts]));
  const total = { ...NO_COUNTS };
  let hours = 0;
  for (let back = 0; back < thresholds.longestWindowHours; back++) {
    if (back >= thresholds.windowHours && total.sends >= thresholds.minSends) {
      break;
    }
    const counts = byHour.get(hoursBefore(now, back));
    hours = back + 1;
    if (!counts) continue;
    total.sends += counts.sends;
    total.hardBounces += counts.hardBounces;
    total.complaints += counts.complaints;
  }
  return {
    ...total,
    hours,
    bounceRate: rateOf(total.hardBounces, total.sends),
    complaintRate: rateOf(total.complaints, total.sends),
  };
};

/** What crossed a threshold: the bounces or the complaints. */
export const GUARDRAIL_CAUSES = ['bounces', 'complaints'] as const;
export type GuardrailCause = (typeof GUARDRAIL_CAUSES)[number];

/**
 * The cause that stops the organization's sending, if any: complaints
 * first (the provider's stricter measure), then bounces, each only past
 * the minimum volume and its minimum count.
 */
export const verdictOf = (
  window: ReputationWindow,
  thresholds: ReputationThresholds,
): GuardrailCause | undefined => {
  if (window.sends < thresholds.minSends || window.sends === 0) {
    return undefined;
  }
  if (
    window.complaints >= thresholds.minComplaints &&
    window.complaints / window.sends >= thresholds.complaintRate
  ) {
    return 'complaints';
  }
  if (
    window.hardBounces >= thresholds.minBounces &&
    window.hardBounces / window.sends >= thresholds.bounceRate
  ) {
    return 'bounces';
  }
  return undefined;
};

/**
 * An organization's guardrail, once tripped (stored on the organization
 * until the operator lifts it): why, when, and the window's figures then.
 */
export interface Guardrail {
  cause: GuardrailCause;
  at: string;
  window: ReputationWindow;
  /** The threshold crossed (a rate), as configured then. */
  threshold: number;
}

/** Percent text of a rate: `4 %`, `0.08 %`. */
export const percent = (rate: number): string =>
  `${Number((rate * 100).toFixed(4))} %`;

/** What a guardrail says to a person: the cause and the figures. */
export const guardrailText = (guardrail: Guardrail): string => {
  const { window: w } = guardrail;
  const [count, rate, noun] =
    guardrail.cause === 'bounces'
      ? [w.hardBounces, w.bounceRate, 'hard bounces']
      : [w.complaints, w.complaintRate, 'complaints'];
  return `reputation_paused: ${noun} ${percent(rate)} (${count} of ${w.sends} sends in the last ${w.hours} h) reached ${percent(guardrail.threshold)}, since ${guardrail.at}; the operator lifts it after review`;
};
