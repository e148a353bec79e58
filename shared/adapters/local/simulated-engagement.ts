/**
 * Driven adapter for the local stack: what SES would report of readers and
 * gateways nobody runs on a laptop, at rates the operator sets (`admin local
 * provider simulate`, kept in the provider's state file): a share of the
 * ordinary addresses bounce or complain, a share read in Apple Mail with
 * Mail Privacy Protection (its proxy loads the pixel on arrival: a machine's
 * open), and a share behind a mail security gateway, which loads the pixel
 * and follows every link of the message at once from Exchange Online
 * Protection's network (a machine's open, scanners' clicks). Which messages:
 * a hash of the message id against the rate, so a rate is a share of the
 * mail and a run can be told again.
 */
import { createHash } from 'node:crypto';
import * as v from 'valibot';
import type { SesEvent } from '../../delivery/ses-event.ts';
import type { Clock } from '../../ports.ts';

const Rate = v.pipe(v.number(), v.minValue(0), v.maxValue(1));

/** The rates of the simulation: shares of the mail, 0 to 1. */
export const SimulationRates = v.object({
  /** Ordinary addresses that bounce (permanent), instead of a delivery. */
  bounces: v.optional(Rate, 0),
  /** Ordinary addresses delivered, then complaining. */
  complaints: v.optional(Rate, 0),
  /** Messages delivered to Apple Mail with Mail Privacy Protection. */
  machineOpens: v.optional(Rate, 0),
  /** Messages delivered behind a security gateway that scans every link. */
  scannerClicks: v.optional(Rate, 0),
});
export type SimulationRates = v.InferOutput<typeof SimulationRates>;

/** Nothing simulated: every ordinary address delivered, nobody reading. */
export const NO_SIMULATION: SimulationRates = {
  bounces: 0,
  complaints: 0,
  machineOpens: 0,
  scannerClicks: 0,
};

/** The user agent Apple's privacy proxy sends, and one of its addresses. */
export const APPLE_PROXY = {
  userAgent: 'Mozilla/5.0',
  ipAddress: '172.225.46.71',
} as const;

/** A gateway's requests: a browser's agent, from Microsoft's EOP network. */
export const GATEWAY_SCANNER = {
  userAgent:
    'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/96.0.4664.110 Safari/537.36',
  ipAddress: '40.107.22.56',
} as const;

/** Most links a simulated scanner follows in one message. */
const MAX_LINKS = 20;

/** Whether this message is in the share `rate` of `what` (0 to 1). */
export const drawn = (messageId: string, what: string, rate: number): boolean =>
  rate > 0 &&
  createHash('sha256').update(`${what}#${messageId}`).digest().readUInt32BE(0) /
    2 ** 32 <
    rate;

/** What happens to an ordinary address's message: SES's outcome. */
export type Fate = 'delivery' | 'bounce' | 'complaint';

/** The fate of a message to an ordinary address, at these rates. */
export const fateOf = (messageId: string, rates: SimulationRates): Fate =>
  drawn(messageId, 'bounce', rates.bounces)
    ? 'bounce'
    : drawn(messageId, 'complaint', rates.complaints)
      ? 'complaint'
      : 'delivery';

/** The distinct http(s) links of an HTML body, in order, at most 20. */
export const linksOf = (html: string): string[] => {
  const found = [...html.matchAll(/href\s*=\s*["']([^"']+)["']/gi)]
    .map((match) => (match[1] ?? '').replaceAll('&amp;', '&').trim())
    .filter((link) => /^https?:\/\//i.test(link));
  return [...new Set(found)].slice(0, MAX_LINKS);
};

/**
 * The machines' opens and clicks of a delivered message, at these rates:
 * Apple's proxy loading the pixel, or a gateway loading it and following
 * every link (at the clock's time, as on arrival).
 */
export const machineEventsOf = (
  mail: SesEvent['mail'],
  html: string,
  rates: SimulationRates,
  clock: Clock,
): SesEvent[] => {
  const now = () => clock.now().toISOString();
  const events: SesEvent[] = [];
  if (drawn(mail.messageId, 'apple', rates.machineOpens)) {
    events.push({
      eventType: 'Open',
      mail,
      open: { timestamp: now(), ...APPLE_PROXY },
    });
  }
  if (drawn(mail.messageId, 'scanner', rates.scannerClicks)) {
    events.push({
      eventType: 'Open',
      mail,
      open: { timestamp: now(), ...GATEWAY_SCANNER },
    });
    for (const link of linksOf(html)) {
      events.push({
        eventType: 'Click',
        mail,
        click: { timestamp: now(), link, ...GATEWAY_SCANNER },
      });
    }
  }
  return events;
};
