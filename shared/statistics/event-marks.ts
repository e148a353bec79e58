/**
 * Application logic: what one SES event of a campaign's or a sequence
 * step's message counts, decided from what its recipient says so far —
 * its firsts (unique opens and clicks), the verdict on an open or a click
 * (`engagement.ts`, judged against the recipient's delivery time) and on
 * a click's burst (`click-bursts.ts`), and the recipient's mailbox
 * provider (the first event's: every event of a recipient counts for the
 * same one). Pure: the tally reads the recipient, calls this, and writes
 * what it decided on the condition that the recipient is still as read.
 */
import { type ClickHistory, recordClick } from './click-bursts.ts';
import { type EventMarks, type MailboxProvider, NO_MARKS } from './counters.ts';
import { judgeClick, judgeOpen } from './engagement.ts';

/** What a recipient's item says so far. */
export interface RecipientSoFar {
  openedAt?: string;
  clickedAt?: string;
  deliveredAt?: string;
  humanOpenedAt?: string;
  machineOpenedAt?: string;
  /** The ids of the links it clicked. */
  links: ReadonlySet<string>;
  /** Its recent clicks (`click-bursts.ts`). */
  clicks: readonly string[];
  /** Its clicks counted a person's and a scanner's: absent before one. */
  humanClicks?: number;
  scannerClicks?: number;
  provider?: MailboxProvider;
}

/** The event, as far as its counts go. */
export interface MarkedEvent {
  type: string;
  at: string;
  /** The provider of its recipient's address (its domain, or its MX). */
  provider: MailboxProvider;
  /** When SES took the message. */
  sentAt?: string;
  userAgent?: string;
  ipAddress?: string;
  /** The clicked link's id, for a click. */
  linkId?: string;
}

/** What an event counts, and what it changes on its recipient. */
export interface Judged {
  marks: EventMarks;
  /** The provider it counts for: the recipient's, else its own. */
  provider: MailboxProvider;
  /** The recipient's clicks after a click. */
  clicks?: ClickHistory;
}

/** What an event counts, given what its recipient says so far. */
export const judgeEvent = (
  event: MarkedEvent,
  state: RecipientSoFar,
): Judged => {
  const marks: EventMarks = {
    ...NO_MARKS,
    open: event.type === 'Open' && state.openedAt === undefined,
    click: event.type === 'Click' && state.clickedAt === undefined,
    link: event.linkId !== undefined && !state.links.has(event.linkId),
  };
  const provider = state.provider ?? event.provider;
  const sighting = {
    at: event.at,
    ...(event.userAgent !== undefined ? { userAgent: event.userAgent } : {}),
    ...(event.ipAddress !== undefined ? { ipAddress: event.ipAddress } : {}),
  };
  const times = {
    ...(event.sentAt !== undefined ? { sentAt: event.sentAt } : {}),
    ...(state.deliveredAt !== undefined
      ? { deliveredAt: state.deliveredAt }
      : {}),
  };
  if (event.type === 'Open') {
    const { machine } = judgeOpen(sighting, times);
    marks.machine = machine;
    marks.firstHuman = !machine && state.humanOpenedAt === undefined;
    marks.firstMachine = machine && state.machineOpenedAt === undefined;
    return { marks, provider };
  }
  if (event.type === 'Click') {
    const { history, marks: judged } = recordClick(
      {
        entries: state.clicks,
        human: state.humanClicks ?? 0,
        scanner: state.scannerClicks ?? 0,
      },
      {
        at: Date.parse(event.at),
        // Different links, different keys: 8 characters of the id do.
        link: event.linkId?.slice(0, 8) ?? '-',
        scanner: judgeClick(sighting, times).machine,
      },
    );
    return { marks: { ...marks, ...judged }, provider, clicks: history };
  }
  return { marks, provider };
};
