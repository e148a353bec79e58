/**
 * The rules that tell a person's opens and clicks from a machine's, on a
 * labelled set of SES events (test/fixtures/ses-engagement-events.json):
 * their precision and recall, printed and held; the cases they get wrong,
 * named; and the same events counted by the events consumer's store on
 * the embedded engine, which must agree with the rules' verdicts.
 */

import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { linkIdOf } from '../../../shared/adapters/aws/dynamo-stats-items.ts';
import { recordSesEvent } from '../../../shared/delivery/events.ts';
import { SesEvent } from '../../../shared/delivery/ses-event.ts';
import { ConflictError } from '../../../shared/errors.ts';
import { clickedLink } from '../../../shared/links/public-links.ts';
import type { ClickHistory } from '../../../shared/statistics/click-bursts.ts';
import {
  judgeEvent,
  type RecipientSoFar,
} from '../../../shared/statistics/event-marks.ts';
import {
  domainOf,
  providerOfDomain,
} from '../../../shared/statistics/mailbox-providers.ts';
import { orgWithList } from '../../support/audience.ts';
import { createTestDeps, fixedClock } from '../../support/dynamo.ts';

/** One labelled event: the SES detail, less its mail object. */
const Labelled = v.object({
  label: v.picklist(['human', 'machine', 'scanner']),
  reason: v.pipe(v.string(), v.minLength(1)),
  detail: v.looseObject({ eventType: v.picklist(['Open', 'Click']) }),
});

/** One recipient's message and the events about it, in arrival order. */
const Scenario = v.object({
  name: v.string(),
  recipient: v.string(),
  sentAt: v.pipe(v.string(), v.isoTimestamp()),
  deliveredAt: v.nullable(v.pipe(v.string(), v.isoTimestamp())),
  source: v.pipe(v.string(), v.minLength(1)),
  events: v.pipe(v.array(Labelled), v.minLength(1)),
});

const FIXTURE = v.parse(
  v.object({ about: v.string(), scenarios: v.array(Scenario) }),
  JSON.parse(
    readFileSync(
      new URL('../../fixtures/ses-engagement-events.json', import.meta.url),
      'utf8',
    ),
  ),
);

/** The SES event of a labelled one, with its message's mail object. */
const sesEventOf = (
  scenario: v.InferOutput<typeof Scenario>,
  labelled: v.InferOutput<typeof Labelled>,
  tags: Record<string, string[]>,
): SesEvent =>
  v.parse(SesEvent, {
    ...labelled.detail,
    mail: {
      messageId: `ses-${scenario.recipient}`,
      timestamp: scenario.sentAt,
      destination: [scenario.recipient],
      tags,
    },
  });

/** What the rules say of each event: a machine's (or a scanner's) or not. */
interface Judgement {
  scenario: string;
  kind: 'open' | 'click';
  label: 'human' | 'machine' | 'scanner';
  machine: boolean;
}

/**
 * Replays a scenario as the tally does: each event judged against what its
 * recipient says so far, which it then changes; a click's verdict is the
 * one its recipient's history holds at the end (a burst flips earlier
 * ones).
 */
const replay = (scenario: v.InferOutput<typeof Scenario>): Judgement[] => {
  const state: RecipientSoFar & { clicks: readonly string[] } = {
    links: new Set<string>(),
    clicks: [],
    ...(scenario.deliveredAt ? { deliveredAt: scenario.deliveredAt } : {}),
  };
  const judged: (Judgement & { entry?: string })[] = [];
  for (const labelled of scenario.events) {
    const event = sesEventOf(scenario, labelled, {});
    if (event.eventType !== 'Open' && event.eventType !== 'Click') continue;
    const seen = event.eventType === 'Open' ? event.open : event.click;
    const linkId =
      event.eventType === 'Click'
        ? linkIdOf(clickedLink(event.click.link))
        : undefined;
    const { marks, provider, clicks } = judgeEvent(
      {
        type: event.eventType,
        at: seen.timestamp,
        provider: providerOfDomain(domainOf(scenario.recipient)) ?? 'other',
        sentAt: event.mail.timestamp,
        ...(seen.userAgent ? { userAgent: seen.userAgent } : {}),
        ...(seen.ipAddress ? { ipAddress: seen.ipAddress } : {}),
        ...(linkId ? { linkId } : {}),
      },
      state,
    );
    state.provider ??= provider;
    if (event.eventType === 'Open') {
      state.openedAt ??= seen.timestamp;
      if (marks.firstHuman) state.humanOpenedAt = seen.timestamp;
      if (marks.firstMachine) state.machineOpenedAt = seen.timestamp;
    } else {
      state.clickedAt ??= seen.timestamp;
      state.links = new Set([...state.links, linkId ?? '']);
      const history = clicks as ClickHistory;
      state.clicks = history.entries;
      state.humanClicks = history.human;
      state.scannerClicks = history.scanner;
    }
    judged.push({
      scenario: scenario.name,
      kind: event.eventType === 'Open' ? 'open' : 'click',
      label: labelled.label,
      machine: marks.machine === true,
      ...(linkId
        ? {
            entry: `${Date.parse(seen.timestamp).toString(36)}:${linkId.slice(0, 8)}`,
          }
        : {}),
    });
  }
  // A click's last word is its recipient's history's (bursts flip).
  return judged.map(({ entry, ...judgement }) => {
    const final = entry
      ? state.clicks.find((kept) => kept.startsWith(`${entry}:`))
      : undefined;
    return final ? { ...judgement, machine: final.endsWith(':s') } : judgement;
  });
};

/** Precision and recall of the machine verdicts, to 4 decimals. */
const scoreOf = (judgements: readonly Judgement[]) => {
  const positive = (j: Judgement) => j.label !== 'human';
  const tp = judgements.filter((j) => positive(j) && j.machine).length;
  const fp = judgements.filter((j) => !positive(j) && j.machine).length;
  const fn = judgements.filter((j) => positive(j) && !j.machine).length;
  const tn = judgements.length - tp - fp - fn;
  const round = (x: number) => Math.round(x * 10_000) / 10_000;
  return {
    events: judgements.length,
    tp,
    fp,
    fn,
    tn,
    precision: round(tp / (tp + fp)),
    recall: round(tp / (tp + fn)),
  };
};

describe('the labelled set of SES open and click events', () => {
  const judgements = FIXTURE.scenarios.flatMap(replay);

  it('labels opens human or machine and clicks human or scanner, each with its reason and source', () => {
    // Arrange
    const events = FIXTURE.scenarios.flatMap((s) =>
      s.events.map((e) => ({ type: e.detail.eventType, label: e.label })),
    );

    // Assert: a machine's open, a scanner's click, never the other way.
    expect(events.length).toBeGreaterThanOrEqual(80);
    for (const { type, label } of events) {
      expect(
        type === 'Open' ? ['human', 'machine'] : ['human', 'scanner'],
      ).toContain(label);
    }
  });

  it('tells machines from people with a precision of at least 0.9 and a recall of at least 0.85, opens and clicks alike', () => {
    // Act
    const all = scoreOf(judgements);
    const opens = scoreOf(judgements.filter((j) => j.kind === 'open'));
    const clicks = scoreOf(judgements.filter((j) => j.kind === 'click'));
    console.table({ all, opens, clicks });

    // Assert
    for (const score of [all, opens, clicks]) {
      expect(score.precision).toBeGreaterThanOrEqual(0.9);
      expect(score.recall).toBeGreaterThanOrEqual(0.85);
    }
  });

  it('gets wrong only the hard cases kept on purpose, each named in its scenario', () => {
    // Act
    const wrong = judgements.filter((j) => j.machine !== (j.label !== 'human'));

    // Assert: what the docs say the rules miss, and nothing else.
    expect([...new Set(wrong.map((j) => j.scenario))].sort()).toEqual(
      FIXTURE.scenarios
        .map((s) => s.name)
        .filter((name) => name.includes('(the rules miss'))
        .sort(),
    );
  });
});

describe('the labelled set counted by the events consumer', () => {
  it('counts what the rules say: human and machine opens, human and scanner clicks, each recipient’s provider', async () => {
    // Arrange
    const test = await createTestDeps({ clock: fixedClock() });
    const { orgId } = await orgWithList(test.deps);
    const campaignId = randomUUID();
    const record = async (event: SesEvent) => {
      for (let attempt = 1; ; attempt++) {
        try {
          return await recordSesEvent(test.deps, event);
        } catch (error) {
          const waiting =
            error instanceof ConflictError && error.code === 'write.contended';
          if (!waiting || attempt >= 40) throw error;
          await new Promise((r) => setTimeout(r, 50));
        }
      }
    };

    // Act: each recipient's delivery (where recorded first), then its events.
    for (const scenario of FIXTURE.scenarios) {
      const tags = {
        org: [orgId],
        kind: ['campaign'],
        campaign: [campaignId],
        contact: [randomUUID()],
      };
      const mail = {
        messageId: `ses-${scenario.recipient}`,
        timestamp: scenario.sentAt,
        destination: [scenario.recipient],
        tags,
      };
      await record({ eventType: 'Send', mail });
      if (scenario.deliveredAt) {
        await record({
          eventType: 'Delivery',
          mail,
          delivery: {
            timestamp: scenario.deliveredAt,
            recipients: [scenario.recipient],
          },
        });
      }
      for (const labelled of scenario.events) {
        await record(sesEventOf(scenario, labelled, tags));
      }
    }
    const { counters: c } = await test.deps.campaignStats.read(
      orgId,
      campaignId,
    );

    // Assert: the store's counts are the rules' verdicts.
    const judgements = FIXTURE.scenarios.flatMap(replay);
    const count = (kind: 'open' | 'click', machine: boolean) =>
      judgements.filter((j) => j.kind === kind && j.machine === machine).length;
    const recipientsWith = (kind: 'open' | 'click', machine: boolean) =>
      FIXTURE.scenarios.filter((s) =>
        replay(s).some((j) => j.kind === kind && j.machine === machine),
      ).length;
    expect({
      opensHuman: c.opensHuman,
      opensMachine: c.opensMachine,
      opensHumanUnique: c.opensHumanUnique,
      opensMachineUnique: c.opensMachineUnique,
      clicksHuman: c.clicksHuman,
      clicksScanner: c.clicksScanner,
      clicksHumanUnique: c.clicksHumanUnique,
      clicksScannerUnique: c.clicksScannerUnique,
    }).toEqual({
      opensHuman: count('open', false),
      opensMachine: count('open', true),
      opensHumanUnique: recipientsWith('open', false),
      opensMachineUnique: recipientsWith('open', true),
      clicksHuman: count('click', false),
      clicksScanner: count('click', true),
      clicksHumanUnique: recipientsWith('click', false),
      clicksScannerUnique: recipientsWith('click', true),
    });
    expect(c.opensTotal).toBe(c.opensHuman + c.opensMachine);
    expect(c.clicksTotal).toBe(c.clicksHuman + c.clicksScanner);
    // Every recipient's sends, by its provider (the consumer domains).
    const sentTo = (domains: string[]) =>
      FIXTURE.scenarios.filter((s) => domains.includes(domainOf(s.recipient)))
        .length;
    expect({
      gmail: c.gmailSent,
      apple: c.appleSent,
      yahoo: c.yahooSent,
      microsoft: c.microsoftSent,
      all: c.sent,
    }).toEqual({
      gmail: sentTo(['gmail.com']),
      apple: sentTo(['icloud.com', 'me.com', 'mac.com']),
      yahoo: sentTo(['yahoo.com', 'aol.com']),
      microsoft: sentTo(['outlook.com']),
      all: FIXTURE.scenarios.length,
    });
  });
});
