/**
 * When steps go out. A step with `sendTimeMinutes` goes out at a minute of
 * the day in the organization's time zone; zone rules (daylight saving
 * days included) come from luxon over the runtime's time zone data, never
 * from offset arithmetic of our own.
 *
 * - A sequence step waits for the next such minute at or after its wait
 *   ends: one candidate per local day, so a daylight-saving day sends once.
 *   A minute that a spring-forward day skips moves to the first minute after
 *   the gap (02:30 → 03:30); on a fall-back day the first of the two 01:30s
 *   is taken.
 * - A series step's day is the local day of day 1 plus the waits before it
 *   (each whole 24 hours is a calendar day, so 09:00 stays 09:00 across a
 *   daylight-saving change); its time of day is `sendTimeMinutes`, or the
 *   time the waits reach without one.
 */
import { DateTime } from 'luxon';
import type { SequenceNode } from './model.ts';

/** The local wall-clock instant of `minutes` past midnight of `day`'s date. */
const atMinuteOf = (day: DateTime, minutes: number): DateTime =>
  day.set({
    hour: Math.floor(minutes / 60),
    minute: minutes % 60,
    second: 0,
    millisecond: 0,
  });

/**
 * When a sequence step whose wait ends at `due` goes out: `due` itself
 * without a time of day, else the first instant at or after `due` that is
 * `sendTimeMinutes` past local midnight in `zone`.
 */
export const sequenceStepTime = (
  due: Date,
  sendTimeMinutes: number | null,
  zone: string,
): Date => {
  if (sendTimeMinutes === null) return due;
  const local = DateTime.fromJSDate(due, { zone });
  if (!local.isValid) throw new Error(`Unknown time zone ${zone}`);
  const today = atMinuteOf(local, sendTimeMinutes);
  if (today.toMillis() >= due.getTime()) return today.toJSDate();
  // Tomorrow's calendar date (not 24 hours on: a DST day is 23 or 25).
  return atMinuteOf(local.plus({ days: 1 }), sendTimeMinutes).toJSDate();
};

/** One step of a series on its calendar. */
export interface CalendarStep {
  nodeId: string;
  /** 0 for the first node of the version. */
  index: number;
  at: Date;
}

/**
 * The calendar of a series: the instant of each send_email node. Day 1 is
 * `startsAt`; the waits before a node move the calendar (24 hours are one
 * calendar day, the rest hours of the clock); its
 * `sendTimeMinutes` sets the time of day on the local date reached (in
 * `zone`). A step whose time of day falls before the instant its waits
 * reach still goes out that day: the calendar counts days, not hours.
 */
export const seriesCalendar = (
  startsAt: Date,
  nodes: readonly SequenceNode[],
  zone: string,
): CalendarStep[] => {
  const day1 = DateTime.fromJSDate(startsAt, { zone });
  if (!day1.isValid) throw new Error(`Unknown time zone ${zone}`);
  const steps: CalendarStep[] = [];
  let waited = 0;
  for (const [index, node] of nodes.entries()) {
    if (node.type === 'wait') {
      waited += node.waitHours;
      continue;
    }
    const reached = day1.plus({
      days: Math.floor(waited / 24),
      hours: waited % 24,
    });
    const at =
      node.sendTimeMinutes === null
        ? reached
        : atMinuteOf(reached, node.sendTimeMinutes);
    steps.push({ nodeId: node.id, index, at: at.toJSDate() });
  }
  return steps;
};
