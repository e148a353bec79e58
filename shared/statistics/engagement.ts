/**
 * Application logic: whether an open or a click was a person's or a
 * machine's, from what SES says of it (the user agent and address of the
 * request that loaded the pixel or followed the link, its time) and when
 * the message was delivered. Pure functions; the events consumer's tally
 * applies them as it records each event, and a click is judged once more
 * with the recipient's other clicks (`click-bursts.ts`). The rules, their
 * thresholds and their evidence: docs/features/engagement.md.
 */
import { scannerNetworkOf } from './scanner-networks.ts';

/** Why an open or a click is taken for a machine's. */
export type MachineReason =
  /** Apple Mail Privacy Protection loaded the pixel ahead of the reader. */
  | 'apple-mpp'
  /** A mail security scanner's network. */
  | 'scanner-network'
  /** An automated client or a known scanner named itself. */
  | 'scanner-agent'
  /** Sooner after delivery than a person can read. */
  | 'too-soon'
  /** One of several links clicked at once (`click-bursts.ts`). */
  | 'burst';

/** A verdict: a person's, or a machine's and why. */
export type Verdict =
  | { machine: false }
  | { machine: true; reason: MachineReason };

/** What SES says of the request that made an open or a click. */
export interface Sighting {
  /** When it happened (SES's `open.timestamp` / `click.timestamp`). */
  at: string;
  userAgent?: string;
  ipAddress?: string;
}

/** When the message left and, where known yet, when it was delivered. */
export interface MessageTimes {
  /** SES's `mail.timestamp`: when it took the message. */
  sentAt?: string;
  /** The recipient's first delivery, once recorded. */
  deliveredAt?: string;
}

/**
 * An open this soon after delivery is a machine's: the message has to
 * reach the reader's client and be opened, and a person takes longer.
 * Scanners and prefetching proxies load the pixel on arrival, often
 * before SES reports the delivery.
 */
export const OPEN_MACHINE_WINDOW_MS = 3_000;

/**
 * A click this soon after delivery is a scanner's: a person opens the
 * message, reads and chooses first. Gateways follow every link on arrival.
 */
export const CLICK_SCANNER_WINDOW_MS = 10_000;

/**
 * The user agent Apple's Mail Privacy Protection proxies send, exactly:
 * no browser or mail client sends it bare (ua-parser/uap-core#509).
 */
const APPLE_PRIVACY_AGENT = 'Mozilla/5.0';

/**
 * User agents of automated clients and scanners: HTTP libraries, headless
 * browsers, crawlers, link previewers and security vendors that name
 * themselves. `bot` only as a word ending in a product token (`Googlebot/`,
 * `bingbot;`), so a phone named CUBOT is not one.
 */
const SCANNER_AGENTS =
  /python-requests|python-urllib|aiohttp|go-http-client|okhttp|apache-httpclient|java\/\d|libwww-perl|\bcurl\/|\bwget\/|node-fetch|axios\/|headlesschrome|phantomjs|[a-z]bot[/;)]|bot$|slackbot|crawler|spider|scanner|facebookexternalhit|barracuda|mimecast|proofpoint/i;

/** Milliseconds from `from` to `to`; undefined when either is unknown. */
const elapsed = (from: string | undefined, to: string): number | undefined => {
  if (from === undefined) return undefined;
  const start = Date.parse(from);
  const end = Date.parse(to);
  return Number.isNaN(start) || Number.isNaN(end) ? undefined : end - start;
};

/**
 * How long after delivery it came: from the delivery when recorded, else
 * from the send (a lower bound's stand-in: delivery follows the send). A
 * time before it counts as 0: an open before the delivery is a scan
 * during it.
 */
const sinceDelivery = (
  sighting: Sighting,
  times: MessageTimes,
): number | undefined => {
  const since = elapsed(times.deliveredAt ?? times.sentAt, sighting.at);
  return since === undefined ? undefined : Math.max(0, since);
};

/** A machine's verdict. */
const machine = (reason: MachineReason): Verdict => ({ machine: true, reason });

const PERSON: Verdict = { machine: false };

/**
 * Who opened: Apple's privacy proxy (its bare user agent), a scanner (its
 * network or its user agent), or anyone within 3 s of delivery are
 * machines; any other is a person. Gmail's and Yahoo's image proxies load
 * the pixel when the person opens the message (and cache it), so their
 * opens are a person's unless they come that soon.
 */
export const judgeOpen = (sighting: Sighting, times: MessageTimes): Verdict => {
  const agent = sighting.userAgent?.trim() ?? '';
  if (agent === APPLE_PRIVACY_AGENT) return machine('apple-mpp');
  if (scannerNetworkOf(sighting.ipAddress, 'open')) {
    return machine('scanner-network');
  }
  if (SCANNER_AGENTS.test(agent)) return machine('scanner-agent');
  const since = sinceDelivery(sighting, times);
  if (since !== undefined && since < OPEN_MACHINE_WINDOW_MS) {
    return machine('too-soon');
  }
  return PERSON;
};

/**
 * Who clicked, judged on the click alone: a scanner's network, an
 * automated client's user agent (the bare `Mozilla/5.0` too: no browser
 * follows a link with it), or a click within 10 s of delivery are a
 * scanner's; any other is a person's until its burst says otherwise
 * (`click-bursts.ts`).
 */
export const judgeClick = (
  sighting: Sighting,
  times: MessageTimes,
): Verdict => {
  const agent = sighting.userAgent?.trim() ?? '';
  if (scannerNetworkOf(sighting.ipAddress, 'click')) {
    return machine('scanner-network');
  }
  if (agent === APPLE_PRIVACY_AGENT || SCANNER_AGENTS.test(agent)) {
    return machine('scanner-agent');
  }
  const since = sinceDelivery(sighting, times);
  if (since !== undefined && since < CLICK_SCANNER_WINDOW_MS) {
    return machine('too-soon');
  }
  return PERSON;
};
