/**
 * When steps go out, in the organization's time zone (issue 13, section 2:
 * "sendTimeMinutes is minutes from midnight in the organization's time
 * zone; a step with it waits for the next such minute after its wait ends;
 * a daylight-saving day sends exactly once"; section 3: "startsAt is day 1,
 * each wait node moves the calendar, sendTimeMinutes sets the time of day").
 */
import { describe, expect, it } from 'vitest';
import type { SequenceNode } from '../../../shared/sequences/model.ts';
import {
  sequenceStepTime,
  seriesCalendar,
} from '../../../shared/sequences/timing.ts';

const at = (iso: string) => new Date(iso);
const iso = (date: Date) => date.toISOString();

const PARIS = 'Europe/Paris';
const NEW_YORK = 'America/New_York';

describe('sequenceStepTime', () => {
  it('without sendTimeMinutes the step goes out when the wait ends', () => {
    const due = at('2026-03-10T13:17:42.000Z');
    expect(sequenceStepTime(due, null, PARIS)).toEqual(due);
  });

  it('waits for the next such minute of the day in the zone: later today, or tomorrow', () => {
    // 09:00 in Paris is 08:00Z in winter.
    expect(iso(sequenceStepTime(at('2026-01-15T06:00:00Z'), 540, PARIS))).toBe(
      '2026-01-15T08:00:00.000Z',
    );
    expect(iso(sequenceStepTime(at('2026-01-15T08:00:01Z'), 540, PARIS))).toBe(
      '2026-01-16T08:00:00.000Z',
    );
    // Exactly on the minute: now, not tomorrow.
    expect(iso(sequenceStepTime(at('2026-01-15T08:00:00Z'), 540, PARIS))).toBe(
      '2026-01-15T08:00:00.000Z',
    );
  });

  it('reads the minute in the zone, not in UTC: 23:30 in New York is the next UTC day', () => {
    expect(
      iso(sequenceStepTime(at('2026-06-01T12:00:00Z'), 23 * 60 + 30, NEW_YORK)),
    ).toBe('2026-06-02T03:30:00.000Z');
  });

  it('across the spring-forward night the wall-clock minute holds (09:00 stays 09:00 the day after)', () => {
    // Paris moves to summer time on 2026-03-29: 09:00 is 08:00Z before, 07:00Z after.
    expect(iso(sequenceStepTime(at('2026-03-28T09:00:00Z'), 540, PARIS))).toBe(
      '2026-03-29T07:00:00.000Z',
    );
  });

  it('a minute the spring-forward day skips moves to just after the gap, and goes out once that day', () => {
    // 02:30 does not exist in Paris on 2026-03-29 (02:00 → 03:00).
    const sent = sequenceStepTime(at('2026-03-28T23:00:00Z'), 150, PARIS);
    expect(iso(sent)).toBe('2026-03-29T01:30:00.000Z'); // 03:30 summer time
    // Due just after it: the next one is the day after, at 02:30 summer time.
    expect(
      iso(sequenceStepTime(new Date(sent.getTime() + 1), 150, PARIS)),
    ).toBe('2026-03-30T00:30:00.000Z');
  });

  it('a minute the fall-back day has twice goes out once, at the first of the two', () => {
    // 02:30 happens twice in Paris on 2026-10-25 (03:00 summer → 02:00 winter).
    const first = sequenceStepTime(at('2026-10-24T23:00:00Z'), 150, PARIS);
    expect(iso(first)).toBe('2026-10-25T00:30:00.000Z'); // 02:30 summer time
    // Right after the first, the second 02:30 (01:30Z) is not taken: tomorrow.
    expect(
      iso(sequenceStepTime(new Date(first.getTime() + 1), 150, PARIS)),
    ).toBe('2026-10-26T01:30:00.000Z');
  });

  it('refuses an unknown zone rather than guessing', () => {
    expect(() =>
      sequenceStepTime(at('2026-01-01T00:00:00Z'), 60, 'Mars/Olympus'),
    ).toThrow(/Mars\/Olympus/);
  });
});

const email = (
  id: string,
  sendTimeMinutes: number | null = null,
): SequenceNode => ({
  id,
  versionId: 'v',
  order: 0,
  createdAt: '',
  updatedAt: '',
  type: 'send_email',
  subject: 'Hi',
  content: '',
  sendTimeMinutes,
  templateId: null,
});
const wait = (waitHours: number): SequenceNode => ({
  id: `wait-${waitHours}`,
  versionId: 'v',
  order: 0,
  createdAt: '',
  updatedAt: '',
  type: 'wait',
  waitHours,
});

describe('seriesCalendar', () => {
  it('startsAt is day 1; each wait moves the calendar; sendTimeMinutes sets the time of day', () => {
    const steps = seriesCalendar(
      at('2026-01-05T08:00:00Z'), // Monday 09:00 in Paris
      [email('a'), wait(48), email('b', 18 * 60), wait(24), email('c')],
      PARIS,
    );

    expect(steps.map((s) => [s.nodeId, s.index, iso(s.at)])).toEqual([
      ['a', 0, '2026-01-05T08:00:00.000Z'],
      ['b', 2, '2026-01-07T17:00:00.000Z'], // Wednesday 18:00
      ['c', 4, '2026-01-08T08:00:00.000Z'], // Thursday 09:00
    ]);
  });

  it('a series crossing a daylight-saving change keeps its wall-clock time (two steps across the boundary)', () => {
    const steps = seriesCalendar(
      at('2026-03-28T08:00:00Z'), // Saturday 09:00 winter time in Paris
      [
        email('before'),
        wait(24),
        email('after'),
        wait(24),
        email('timed', 540),
      ],
      PARIS,
    );

    expect(steps.map((s) => iso(s.at))).toEqual([
      '2026-03-28T08:00:00.000Z', // 09:00 winter
      '2026-03-29T07:00:00.000Z', // 09:00 summer: 23 hours later
      '2026-03-30T07:00:00.000Z', // 09:00 summer
    ]);
  });

  it('the time of day is read in the zone: a 09:00 step in New York and in Paris are six hours apart', () => {
    const nodes = [email('a', 540)];
    const start = at('2026-02-02T12:00:00Z');
    const paris = seriesCalendar(start, nodes, PARIS)[0]?.at;
    const newYork = seriesCalendar(start, nodes, NEW_YORK)[0]?.at;

    expect(iso(paris as Date)).toBe('2026-02-02T08:00:00.000Z');
    expect(iso(newYork as Date)).toBe('2026-02-02T14:00:00.000Z');
  });

  it('hours beyond whole days move the clock: a 30-hour wait from 09:00 reaches 15:00 the next day', () => {
    const steps = seriesCalendar(
      at('2026-01-05T08:00:00Z'),
      [email('a'), wait(30), email('b')],
      PARIS,
    );
    expect(iso(steps[1]?.at as Date)).toBe('2026-01-06T14:00:00.000Z');
  });
});
