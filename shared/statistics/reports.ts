/**
 * Application logic: the statistics of an organization (its campaigns'
 * and sequence steps' mail, month by month) and of a sequence's steps, as
 * the API shows them (an extension: GET /stats, GET
 * /sequences/{sequenceId}/stats). The same figures as a campaign's
 * (`figures.ts`). Agnostic to how it is called and where data is stored.
 */
import * as v from 'valibot';
import { ViewId } from '../validation.ts';
import type { MailCounters } from './counters.ts';
import {
  BouncesView,
  ByProviderView,
  bouncesOf,
  byProviderOf,
  ClicksView,
  ClickTotalsView,
  clicksOf,
  clickTotalsOf,
  counted,
  OpensView,
  opensOf,
  Rate,
  rate,
  ratesEntries,
  ratesOf,
} from './figures.ts';
import type { LinkClicks, MonthRange, StatisticsDeps } from './ports.ts';

/** A month, `YYYY-MM` (UTC), 2000 to 9999. */
const Month = v.pipe(
  v.string(),
  v.regex(/^[2-9]\d{3}-(?:0[1-9]|1[0-2])$/, 'must be a month, YYYY-MM'),
);

/** `?from=&to=` of GET /stats: months, both included. */
export const OrganizationStatsQuery = v.pipe(
  v.object({
    from: v.optional(
      v.pipe(
        Month,
        v.description(
          'The first month counted (UTC, `YYYY-MM`); left out: the first there is',
        ),
      ),
    ),
    to: v.optional(
      v.pipe(
        Month,
        v.description(
          'The last month counted (UTC, `YYYY-MM`), included; left out: the last there is',
        ),
      ),
    ),
  }),
  v.forward(
    v.check(
      ({ from, to }) => from === undefined || to === undefined || from <= to,
      'must not be after to',
    ),
    ['from'],
  ),
);
export type OrganizationStatsQuery = v.InferOutput<
  typeof OrganizationStatsQuery
>;

/** What every statistics of mail shows, from its counters. */
const figureEntries = {
  sent: counted('Messages SES took (its send events)'),
  delivered: counted("Messages the recipient's mail server accepted"),
  bounces: BouncesView,
  complaints: counted(
    'Recipients who marked a message as spam (feedback loops)',
  ),
  rejected: counted('Messages SES took but did not send (a virus found)'),
  opens: OpensView,
};

/** The figures of counters, with their clicks' links. */
const figuresOf = (c: MailCounters, links: readonly LinkClicks[]) => ({
  sent: c.sent,
  delivered: c.delivered,
  bounces: bouncesOf(c),
  complaints: c.complaints,
  rejected: c.rejected,
  opens: opensOf(c),
  clicks: clicksOf(c, links),
  rates: ratesOf(c, c.sent),
  byProvider: byProviderOf(c),
});

/** The statistics of an organization as the API shows them. */
export const OrganizationStatsView = v.pipe(
  v.object({
    from: v.pipe(
      v.nullable(v.string()),
      v.description('The first month counted, as asked; null: from the first'),
    ),
    to: v.pipe(
      v.nullable(v.string()),
      v.description('The last month counted, as asked; null: to the last'),
    ),
    ...figureEntries,
    unsubscribes: counted(
      "Recipients who unsubscribed through a campaign's unsubscribe link",
    ),
    clicks: v.pipe(
      ClickTotalsView,
      v.description(
        'Clicks on the tracked links of the messages (their links are each campaign’s)',
      ),
    ),
    rates: v.pipe(
      v.object({
        ...ratesEntries,
        unsubscribe: Rate('Unsubscribes over delivered'),
      }),
      v.description(
        "The usual rates over the months counted. Open, click and click-to-open count a person's opens and clicks (`basis`)",
      ),
    ),
    byProvider: ByProviderView,
  }),
  v.title('OrganizationStats'),
);
export type OrganizationStatsView = v.InferOutput<typeof OrganizationStatsView>;

/**
 * The statistics of an organization (GET /stats): the events of its
 * campaigns' and sequence steps' mail counted in the months asked (the
 * month an event was counted in, UTC). Unique opens and clicks are
 * recipients of each message: a person who opened two campaigns counts
 * twice.
 */
export const readOrganizationStats = async (
  deps: StatisticsDeps,
  orgId: string,
  query: OrganizationStatsQuery,
): Promise<OrganizationStatsView> => {
  const months: MonthRange = {
    ...(query.from !== undefined ? { from: query.from } : {}),
    ...(query.to !== undefined ? { to: query.to } : {}),
  };
  const c = await deps.mailStats.organization(orgId, months);
  const { clicks: _, rates, ...figures } = figuresOf(c, []);
  return {
    from: query.from ?? null,
    to: query.to ?? null,
    ...figures,
    unsubscribes: c.unsubscribes,
    clicks: clickTotalsOf(c),
    rates: { ...rates, unsubscribe: rate(c.unsubscribes, c.delivered) },
  };
};

/** The statistics of one step of a sequence. */
export const StepStatsView = v.pipe(
  v.object({
    step: v.pipe(
      v.number(),
      v.integer(),
      v.minValue(1),
      v.description(
        "The step: 1 for its version's first email, and so on (every version's step of that number)",
      ),
    ),
    ...figureEntries,
    clicks: v.pipe(
      ClicksView,
      v.description("Clicks on the tracked links of the step's messages"),
    ),
    rates: v.pipe(
      v.object(ratesEntries),
      v.description(
        "The usual rates, each a share of its denominator (bounces over sent). Open, click and click-to-open count a person's opens and clicks (`basis`)",
      ),
    ),
    byProvider: ByProviderView,
  }),
  v.title('SequenceStepStats'),
);
export type StepStatsView = v.InferOutput<typeof StepStatsView>;

/** The statistics of a sequence's steps as the API shows them. */
export const SequenceStatsView = v.pipe(
  v.object({
    sequenceId: v.pipe(ViewId, v.description('The sequence')),
    steps: v.pipe(
      v.array(StepStatsView),
      v.description(
        'Each step that sent mail, in step order (a step none was sent for is left out)',
      ),
    ),
  }),
  v.title('SequenceStats'),
);
export type SequenceStatsView = v.InferOutput<typeof SequenceStatsView>;

/**
 * The statistics of each step of a sequence (GET
 * /sequences/{sequenceId}/stats): the events of the messages its journeys
 * sent, by step number. Unique opens and clicks are messages': a contact
 * gets each step once.
 */
export const readSequenceStats = async (
  deps: StatisticsDeps,
  orgId: string,
  sequenceId: string,
): Promise<SequenceStatsView> => ({
  sequenceId,
  steps: (await deps.mailStats.steps(orgId, sequenceId)).map(
    ({ step, counters, links }) => ({ step, ...figuresOf(counters, links) }),
  ),
});
