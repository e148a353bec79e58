/**
 * The reputation guardrail's rules (issue 33, §2), pure: the window of an
 * organization's hourly counters (the last 24 hours, stretched back while
 * it holds fewer sends than the minimum, up to 7 days), the verdict
 * (complaints first, then bounces, each past the minimum volume and its
 * minimum count, below the provider's review), and the operator's
 * override of the thresholds.
 */
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_REPUTATION_THRESHOLDS as DEFAULTS,
  type HourCounts,
  hoursBefore,
  PROVIDER_THRESHOLDS,
  thresholdsFrom,
  verdictOf,
  windowOf,
} from '../../../shared/reputation/model.ts';

const NOW = new Date('2026-11-28T15:30:00.000Z');

/** Counters of the hour `back` hours before NOW's. */
const hour = (
  back: number,
  sends: number,
  hardBounces = 0,
  complaints = 0,
): HourCounts => ({
  hour: hoursBefore(NOW, back),
  counts: { sends, hardBounces, complaints },
});

describe('the reputation window and verdict', () => {
  it('keeps our thresholds below the provider’s review, with a minimum volume and counts', () => {
    expect(DEFAULTS.bounceRate).toBe(0.04);
    expect(DEFAULTS.complaintRate).toBe(0.0008);
    expect(DEFAULTS.bounceRate).toBeLessThan(
      PROVIDER_THRESHOLDS.review.bounceRate,
    );
    expect(DEFAULTS.complaintRate).toBeLessThan(
      PROVIDER_THRESHOLDS.review.complaintRate,
    );
    expect(DEFAULTS).toMatchObject({
      minSends: 1_000,
      minBounces: 10,
      minComplaints: 2,
      windowHours: 24,
      longestWindowHours: 168,
    });
  });

  it('reads the last 24 hours of a busy organization, and nothing older', () => {
    // Arrange: 2,400 sends in the last day; an old hour full of bounces.
    const read = [
      ...Array.from({ length: 24 }, (_, back) => hour(back, 100, 1)),
      hour(30, 500, 400),
    ];
    // Act
    const window = windowOf(read, NOW, DEFAULTS);
    // Assert
    expect(window).toMatchObject({
      hours: 24,
      sends: 2_400,
      hardBounces: 24,
      bounceRate: 0.01,
    });
    expect(verdictOf(window, DEFAULTS)).toBeUndefined();
  });

  it('stretches a quiet organization’s window back until it holds the minimum sends, a week at most', () => {
    // Arrange: 300 sends a day for ten days (one hour a day).
    const read = Array.from({ length: 10 }, (_, day) => hour(day * 24, 300));
    // Act
    const window = windowOf(read, NOW, DEFAULTS);
    const tooQuiet = windowOf([hour(0, 100), hour(100, 100)], NOW, DEFAULTS);
    // Assert: four days reach 1,200 sends; a week holds only 200.
    expect(window.sends).toBe(1_200);
    expect(window.hours).toBe(3 * 24 + 1);
    expect(tooQuiet).toMatchObject({ sends: 200, hours: 168 });
    expect(verdictOf(tooQuiet, DEFAULTS)).toBeUndefined();
  });

  it('pauses at 4 % hard bounces with at least 10 of them, never below the minimum volume', () => {
    expect(
      verdictOf(windowOf([hour(0, 1_000, 40)], NOW, DEFAULTS), DEFAULTS),
    ).toBe('bounces');
    expect(
      verdictOf(windowOf([hour(0, 1_000, 39)], NOW, DEFAULTS), DEFAULTS),
    ).toBeUndefined();
    // 9 % of a small list: too few sends to judge.
    expect(
      verdictOf(windowOf([hour(0, 100, 9)], NOW, DEFAULTS), DEFAULTS),
    ).toBeUndefined();
  });

  it('pauses at 0.08 % complaints with at least 2 of them, and names complaints first', () => {
    // 2 in 2,000 is 0.1 %: paused; 1 in 1,000 is 0.1 % but one complaint.
    expect(
      verdictOf(windowOf([hour(0, 2_000, 0, 2)], NOW, DEFAULTS), DEFAULTS),
    ).toBe('complaints');
    expect(
      verdictOf(windowOf([hour(0, 1_000, 0, 1)], NOW, DEFAULTS), DEFAULTS),
    ).toBeUndefined();
    // 2 in 3,000 is 0.067 %: under the threshold.
    expect(
      verdictOf(windowOf([hour(0, 3_000, 0, 2)], NOW, DEFAULTS), DEFAULTS),
    ).toBeUndefined();
    expect(
      verdictOf(windowOf([hour(0, 2_000, 100, 2)], NOW, DEFAULTS), DEFAULTS),
    ).toBe('complaints');
  });
});

describe('REPUTATION_GUARDRAIL (the operator’s thresholds)', () => {
  it('overrides named thresholds and keeps the others', () => {
    expect(thresholdsFrom('bounceRate=0.03, minSends=5000')).toEqual({
      ...DEFAULTS,
      bounceRate: 0.03,
      minSends: 5_000,
    });
    expect(thresholdsFrom(undefined)).toEqual(DEFAULTS);
    expect(thresholdsFrom('  ')).toEqual(DEFAULTS);
  });

  it('refuses an unknown name, a rate above 1, a count that is not whole, a window out of 1–168 hours, or a longest window below the window', () => {
    for (const bad of [
      'bounce=0.03',
      'bounceRate=1.5',
      'minSends=10.5',
      'minSends=-1',
      'windowHours=0',
      'longestWindowHours=200',
      'windowHours=48,longestWindowHours=24',
      'bounceRate=',
      'bounceRate=abc',
    ]) {
      expect(() => thresholdsFrom(bad), bad).toThrow(
        /Invalid configuration: REPUTATION_GUARDRAIL/,
      );
    }
  });
});
