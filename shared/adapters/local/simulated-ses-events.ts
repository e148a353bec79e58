/**
 * Driven adapter for the local stack: SES's event publishing, played. The
 * mailbox emulator stores mail but publishes no events, so this Mailer
 * decorator publishes, after each accepted message, what SES would put in
 * the events queue: a `Send`, then the outcome its mailbox simulator gives
 * the recipient (`success@`, `bounce@`, `complaint@`, `suppressionlist@`
 * `simulator.amazonses.com`, with or without a `+label`); any other address
 * is delivered — or, at the rates the operator set, bounces or complains,
 * and is opened by Apple's privacy proxy or scanned by a gateway
 * (`simulated-engagement.ts`). The same addresses work on AWS, so one test
 * script serves both. Each accepted message is also appended to a sent
 * log, so that engagement events (opens, clicks) can be injected later by
 * the admin CLI.
 */
import { appendFile, mkdir, readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import * as v from 'valibot';
import type { SesEvent } from '../../delivery/ses-event.ts';
import { logger } from '../../observability.ts';
import type { Clock, Mailer, OutgoingMessage } from '../../ports.ts';
import {
  type Fate,
  fateOf,
  machineEventsOf,
  NO_SIMULATION,
  type SimulationRates,
} from './simulated-engagement.ts';

/** Publishes one SES event (an EventBridge event's `detail`). */
export type SesEventPublisher = (detail: SesEvent) => Promise<void>;

/** The domain of SES's mailbox simulator. */
export const SIMULATOR_DOMAIN = 'simulator.amazonses.com';

/** The scenarios of SES's mailbox simulator, named by their local part. */
export type SimulatorScenario =
  | 'success'
  | 'bounce'
  | 'ooto'
  | 'complaint'
  | 'suppressionlist';

// SES allows a label after a `+` ("labeling", for VERP tests):
// bounce+abc@simulator.amazonses.com bounces like bounce@….
const SIMULATOR_ADDRESS =
  /^(success|bounce|ooto|complaint|suppressionlist)(?:\+[^@\s]*)?@simulator\.amazonses\.com$/i;

/**
 * The mailbox simulator scenario an address asks for (labels allowed),
 * or undefined for an ordinary address.
 */
export const simulatorScenarioOf = (
  address: string,
): SimulatorScenario | undefined => {
  const match = SIMULATOR_ADDRESS.exec(address.trim());
  return match?.[1]?.toLowerCase() as SimulatorScenario | undefined;
};

/** One line of the sent log: a message the mailer accepted. */
export const SentMessage = v.object({
  messageId: v.pipe(v.string(), v.minLength(1)),
  to: v.pipe(v.string(), v.minLength(1)),
  /** The tags its events carry (`mail.tags`): each name → its values. */
  tags: v.record(v.string(), v.array(v.string())),
  /** When it was sent (the clock's time): its events' `mail.timestamp`. */
  sentAt: v.pipe(v.string(), v.isoTimestamp()),
});
export type SentMessage = v.InferOutput<typeof SentMessage>;

/** Appends one message to the sent log (JSON lines; created if missing). */
export const appendSentMessage = async (
  file: string,
  message: SentMessage,
): Promise<void> => {
  await mkdir(dirname(file), { recursive: true });
  // One short write in append mode: lines of concurrent writers never mix.
  await appendFile(file, `${JSON.stringify(message)}\n`);
};

/**
 * The messages of the sent log, oldest first ([] when there is none yet).
 * Every line is validated; a last line without its newline is a write cut
 * short by a crash and is skipped, any other bad line is an error.
 */
export const readSentLog = async (file: string): Promise<SentMessage[]> => {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const lines = text.split('\n');
  const last = lines.pop();
  if (last) {
    logger.warn('Skipping the unfinished last line of the sent log', { file });
  }
  return lines.flatMap((line, index) => {
    if (!line.trim()) return [];
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch (error) {
      throw new Error(`${file}:${index + 1} is not valid JSON`, {
        cause: error,
      });
    }
    const result = v.safeParse(SentMessage, json);
    if (!result.success) {
      throw new Error(
        `${file}:${index + 1} is not a sent message: ${v.summarize(result.issues)}`,
      );
    }
    return [result.output];
  });
};

/**
 * The `mail.tags` SES gives a message's events: each of its tags as a
 * one-value list, plus SES's own `ses:` tags.
 */
export const sesTagsOf = (
  message: OutgoingMessage,
): Record<string, string[]> => {
  const tags: Record<string, string[]> = {};
  for (const [name, value] of Object.entries(message.tags ?? {})) {
    tags[name] = [value];
  }
  const fromDomain = /@([^@>\s]+)>?\s*$/.exec(message.from)?.[1];
  if (fromDomain) tags['ses:from-domain'] = [fromDomain.toLowerCase()];
  if (message.tenantName) {
    tags['ses:configuration-set'] = [message.tenantName];
  }
  return tags;
};

/** The `mail` object of every event about a sent message. */
export const mailOf = (sent: SentMessage): SesEvent['mail'] => ({
  timestamp: sent.sentAt,
  messageId: sent.messageId,
  destination: [sent.to],
  tags: sent.tags,
});

const REPORTING_MTA = 'dns; local.amazonses.com';

/**
 * The events SES publishes for a message it accepted, in order: `Send`,
 * then what the mailbox simulator does with the recipient (an ordinary
 * address is delivered, unless its simulated `fate` says it bounces or
 * complains). Each timestamp is read from the clock as the event is made.
 * Beside the fields our schema checks, the events carry a few of the
 * others SES sends (feedback ids, SMTP status), so consumers meet
 * realistic payloads.
 */
export const outcomeEventsOf = (
  sent: SentMessage,
  clock: Clock,
  fate: Fate = 'delivery',
): SesEvent[] => {
  const mail = mailOf(sent);
  const now = () => clock.now().toISOString();
  const send = { eventType: 'Send' as const, mail, send: {} };
  const delivery = () => {
    const event = {
      eventType: 'Delivery' as const,
      mail,
      delivery: {
        timestamp: now(),
        recipients: [sent.to],
        processingTimeMillis: 0,
        smtpResponse: '250 2.6.0 Message received',
        reportingMTA: 'local.amazonses.com',
      },
    };
    return event;
  };
  const bounce = (bounceSubType: 'General' | 'Suppressed') => {
    const event = {
      eventType: 'Bounce' as const,
      mail,
      bounce: {
        bounceType: 'Permanent' as const,
        bounceSubType,
        bouncedRecipients: [
          {
            emailAddress: sent.to,
            action: 'failed',
            status: '5.1.1',
            diagnosticCode:
              bounceSubType === 'Suppressed'
                ? 'Amazon SES has suppressed sending to this address because it has a recent history of bouncing as an invalid address.'
                : 'smtp; 550 5.1.1 user unknown',
          },
        ],
        timestamp: now(),
        feedbackId: `${sent.messageId}-bounce`,
        reportingMTA: REPORTING_MTA,
      },
    };
    return event;
  };
  const complaint = () => {
    const event = {
      eventType: 'Complaint' as const,
      mail,
      complaint: {
        complainedRecipients: [{ emailAddress: sent.to }],
        timestamp: now(),
        feedbackId: `${sent.messageId}-complaint`,
        complaintFeedbackType: 'abuse',
      },
    };
    return event;
  };

  switch (simulatorScenarioOf(sent.to)) {
    case 'bounce':
      return [send, bounce('General')];
    // The simulator bounces it "as if the address were on the global
    // suppression list": subtype Suppressed (OnAccountSuppressionList is
    // the account-level list's).
    case 'suppressionlist':
      return [send, bounce('Suppressed')];
    case 'complaint':
      return [send, delivery(), complaint()];
    // The simulator's own addresses do what they say, whatever the rates.
    case 'success':
    case 'ooto':
      return [send, delivery()];
    default:
      // An ordinary address: delivered, or its simulated fate.
      return fate === 'bounce'
        ? [send, bounce('General')]
        : fate === 'complaint'
          ? [send, delivery(), complaint()]
          : [send, delivery()];
  }
};

/** The engagement events the admin CLI can inject. */
export type EngagementType = 'Open' | 'Click';

/**
 * An `Open` or a `Click` of a sent message, as SES publishes it when the
 * recipient opens it or follows one of its links (a click needs the link).
 */
export const engagementEventOf = (
  sent: SentMessage,
  engagement: { type: 'Open' } | { type: 'Click'; link: string },
  clock: Clock,
): SesEvent => {
  const mail = mailOf(sent);
  const seen = {
    timestamp: clock.now().toISOString(),
    ipAddress: '127.0.0.1',
    userAgent: 'local-stack (admin local provider event)',
  };
  return engagement.type === 'Open'
    ? { eventType: 'Open', mail, open: seen }
    : {
        eventType: 'Click',
        mail,
        click: { ...seen, link: engagement.link },
      };
};

/** What the decorator needs besides the mailer it wraps. */
export interface SimulatedSesEventsOptions {
  /** Where the events go: locally, the events queue. */
  publish: SesEventPublisher;
  clock: Clock;
  /** The sent log (JSON lines) in the data dir. */
  sentLogFile: string;
  /**
   * The simulation's rates, read at each send (the provider's state file:
   * `admin local provider simulate`); none: nothing simulated.
   */
  simulation?: () => Promise<SimulationRates>;
}

/**
 * The Mailer port of the local stack: the inner mailer sends (the mailbox
 * emulator), then this publishes SES's events for the message and logs it.
 * Neither a publish nor a sent-log failure fails the send: the mail is
 * gone, as on SES, whose events arrive (or not) on their own; they are
 * logged. A send the inner mailer refuses publishes nothing.
 */
export class SimulatedSesEvents implements Mailer {
  constructor(
    private readonly inner: Mailer,
    private readonly options: SimulatedSesEventsOptions,
  ) {}

  async send(message: OutgoingMessage): Promise<{ messageId: string }> {
    const result = await this.inner.send(message);
    const sent: SentMessage = {
      messageId: result.messageId,
      to: message.to,
      tags: sesTagsOf(message),
      sentAt: this.options.clock.now().toISOString(),
    };
    try {
      await appendSentMessage(this.options.sentLogFile, sent);
    } catch (error) {
      logger.warn('Could not append to the sent log', {
        error,
        messageId: sent.messageId,
      });
    }
    const rates = await this.rates();
    const outcome = outcomeEventsOf(
      sent,
      this.options.clock,
      fateOf(sent.messageId, rates),
    );
    const delivered = outcome.some((event) => event.eventType === 'Delivery');
    const events = [
      ...outcome,
      ...(delivered
        ? machineEventsOf(mailOf(sent), message.html, rates, this.options.clock)
        : []),
    ];
    // One after the other: the queue receives them in SES's order.
    for (const event of events) {
      try {
        await this.options.publish(event);
      } catch (error) {
        logger.warn('Could not publish a simulated SES event', {
          error,
          messageId: sent.messageId,
          eventType: event.eventType,
        });
      }
    }
    return result;
  }

  /** The simulation's rates now; none when unset or unreadable. */
  private async rates(): Promise<SimulationRates> {
    try {
      return (await this.options.simulation?.()) ?? NO_SIMULATION;
    } catch (error) {
      logger.warn('Could not read the simulation rates', { error });
      return NO_SIMULATION;
    }
  }
}
