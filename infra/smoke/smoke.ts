/**
 * The operator's smoke test: one scripted journey against a running stack
 * (the local one or a deployment on AWS), over plain HTTP with a fetch
 * function, and nothing else of the service: a list of three SES mailbox
 * simulator contacts (delivered, bounced, complained), a template, a
 * campaign sent now, followed until it is sent, its statistics until the
 * bounce and the complaint are counted, and the suppressed contacts. One
 * line per step; it stops at the first failure and always cleans up what
 * it made and the API lets it remove.
 *
 * Only types come from the service's code (erased at run time), so the
 * field names the journey reads are checked against the real views.
 */
import type { CampaignView } from '../../shared/campaigns/campaigns.ts';
import type { CampaignStatsView } from '../../shared/campaigns/stats.ts';

/** The part of an HTTP answer the journey reads (a fetch `Response` is one). */
export interface HttpAnswer {
  status: number;
  headers: { get(name: string): string | null };
  text(): Promise<string>;
}

/** A fetch-like function: the global `fetch`, or one routed in process. */
export type FetchLike = (
  url: string,
  init: {
    method: string;
    headers: Record<string, string>;
    body?: string;
    signal?: AbortSignal;
  },
) => Promise<HttpAnswer>;

/** What a run needs from its host: HTTP, output, and time. */
export interface SmokeIo {
  fetch: FetchLike;
  /** Prints one line (without its newline). */
  print(line: string): void;
  /** Waits; `setTimeout` by default. */
  sleep?: (ms: number) => Promise<void>;
  /** Milliseconds between two reads of a wait (default 2000). */
  pollMs?: number;
  /** Names what the run makes; random by default. */
  runId?: string;
}

/** The options of a run, as the command line gives them. */
export interface SmokeOptions {
  /** The API's base URL, ending in `/api/v1`, without a trailing slash. */
  api: string;
  key: string;
  /** How long each wait may last, in milliseconds. */
  timeoutMs: number;
}

/** The default of `--timeout`, in seconds. */
export const DEFAULT_TIMEOUT_SECONDS = 180;

/** Milliseconds one request may take before it counts as failed. */
const REQUEST_TIMEOUT_MS = 30_000;

/** How many times a request answered 429 is tried again. */
const RATE_LIMIT_RETRIES = 3;

/** The usage text of `npm run smoke`. */
export const USAGE = `Usage: npm run --silent smoke -- --api <base url> --key <admin key> [--timeout <seconds>]

Drives one journey against a running stack over HTTP: a list with three SES
mailbox simulator contacts, a template, a campaign sent now, its statistics
(delivery, bounce, complaint) and the suppressed contacts. Then it cleans
up: deletes the template (and the campaign if it is still a draft) and
unsubscribes the contacts; the API cannot delete lists or contacts, nor a
campaign that was sent, so those stay, named by the run id. One line per
step; exit code 0 when every step passed.

  --api       the API's base URL, ending in /api/v1 (a trailing slash is fine)
  --key       an API key of an owner or admin of the organization to test
  --timeout   seconds each wait may last (default ${DEFAULT_TIMEOUT_SECONDS})
  --help      this text

Exit codes: 0 passed, 1 a step or a cleanup failed, 2 usage mistake.`;

/** A mistake on the command line: exit code 2 with the usage. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** What the command line asks for. */
export type Invocation =
  | { help: true }
  | { help: false; options: SmokeOptions };

/**
 * Reads the command line: `--api`, `--key`, `--timeout` (each as
 * `--flag value` or `--flag=value`) and `--help`.
 */
export const parseArgs = (argv: readonly string[]): Invocation => {
  const values = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (arg === '--help' || arg === '-h') return { help: true };
    const flag = /^--(api|key|timeout)(?:=(.*))?$/s.exec(arg);
    if (!flag) throw new UsageError(`Unknown argument: ${arg}`);
    const [, name = '', inline] = flag;
    const value = inline ?? argv[++i];
    if (value === undefined || value === '' || value.startsWith('--')) {
      throw new UsageError(`--${name} needs a value`);
    }
    values.set(name, value);
  }
  const api = values.get('api');
  const key = values.get('key');
  if (!api || !key) {
    const missing = [api ? '' : '--api', key ? '' : '--key'].filter(Boolean);
    throw new UsageError(`Missing ${missing.join(' and ')}`);
  }
  return {
    help: false,
    options: {
      api: apiBaseOf(api),
      key,
      timeoutMs: timeoutOf(values.get('timeout')),
    },
  };
};

/** The base URL without its trailing slashes; it must end in `/api/v1`. */
const apiBaseOf = (raw: string): string => {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`--api is not a URL: ${raw}`);
  }
  const base = raw.replace(/\/+$/, '');
  if (!/^https?:$/.test(url.protocol) || !base.endsWith('/api/v1')) {
    throw new UsageError(
      `--api must be the API's http(s) base URL, ending in /api/v1: ${raw}`,
    );
  }
  return base;
};

const timeoutOf = (raw: string | undefined): number => {
  if (raw === undefined) return DEFAULT_TIMEOUT_SECONDS * 1000;
  const seconds = Number(raw);
  if (!Number.isFinite(seconds) || seconds <= 0) {
    throw new UsageError(`--timeout must be a positive number of seconds`);
  }
  return seconds * 1000;
};

/** A check of the journey that did not hold: its message is the line. */
export class SmokeFailure extends Error {
  override readonly name = 'SmokeFailure';
}

/** One field of an error answer's `details`. */
interface FieldIssue {
  field: string;
  message: string;
}

/** An answer other than the one a step expected. */
export class ApiError extends SmokeFailure {
  constructor(
    readonly status: number,
    readonly code: string | undefined,
    readonly error: string | undefined,
    readonly details: readonly FieldIssue[],
  ) {
    super(describeError(status, code, error, details));
  }
}

/**
 * One line about an error answer: status, code, then what it says. A
 * `sending.blocked` names its blockers, the reason a smoke test most often
 * meets it.
 */
export const describeError = (
  status: number,
  code: string | undefined,
  error: string | undefined,
  details: readonly FieldIssue[],
): string => {
  const head = [status, code].filter(Boolean).join(' ');
  if (code === 'sending.blocked') {
    const blockers = details.map((d) => d.message).join(', ');
    return `${head} — the organization is not ready to send; blockers: ${blockers || 'none named'} (GET /me lists them; see the README's "Sending setup")`;
  }
  const fields = details.map((d) => `${d.field}: ${d.message}`).join('; ');
  return `${head} — ${error ?? 'no error message'}${fields ? ` [${fields}]` : ''}`;
};

/** A JSON answer of the API: the envelope's `data`, and the pagination. */
interface Answer<T> {
  status: number;
  data: T;
  pagination?: { total: number };
}

/** The API as the journey calls it. */
export interface Api {
  request<T>(
    method: string,
    path: string,
    options?: { body?: unknown; expect?: number },
  ): Promise<Answer<T>>;
}

/**
 * The API at `base` with `key`: JSON in, the envelope's `data` out; an
 * unexpected status is an `ApiError`, an unreachable host a `SmokeFailure`.
 * A 429 (the key's 120 requests a minute, shared with its other users) is
 * waited out as its `Retry-After` says and tried again a few times.
 */
export const apiAt = (
  base: string,
  key: string,
  io: Pick<SmokeIo, 'fetch' | 'sleep'>,
): Api => {
  const sleep = io.sleep ?? delay;
  return {
    async request<T>(
      method: string,
      path: string,
      { body, expect = 200 }: { body?: unknown; expect?: number } = {},
    ): Promise<Answer<T>> {
      const url = `${base}${path}`;
      const headers: Record<string, string> = {
        'x-api-key': key,
        accept: 'application/json',
      };
      if (body !== undefined) headers['content-type'] = 'application/json';
      for (let attempt = 0; ; attempt++) {
        let answer: HttpAnswer;
        let text: string;
        try {
          answer = await io.fetch(url, {
            method,
            headers,
            ...(body === undefined ? {} : { body: JSON.stringify(body) }),
            signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
          });
          text = await answer.text();
        } catch (error) {
          throw new SmokeFailure(
            `${method} ${url} got no answer: ${reasonOf(error)}`,
          );
        }
        if (answer.status === 429 && attempt < RATE_LIMIT_RETRIES) {
          const seconds = Number(answer.headers.get('retry-after'));
          await sleep(Math.min(60, seconds > 0 ? seconds : 5) * 1000);
          continue;
        }
        const json = parseJson(text);
        if (answer.status !== expect) {
          throw new ApiError(
            answer.status,
            stringOf(json.code),
            stringOf(json.error) ?? (text.slice(0, 200) || undefined),
            Array.isArray(json.details) ? (json.details as FieldIssue[]) : [],
          );
        }
        return {
          status: answer.status,
          data: json.data as T,
          ...(json.pagination
            ? { pagination: json.pagination as { total: number } }
            : {}),
        };
      }
    },
  };
};

const delay = (ms: number) =>
  new Promise<void>((resolve) => setTimeout(resolve, ms));

const stringOf = (value: unknown): string | undefined =>
  typeof value === 'string' ? value : undefined;

const parseJson = (text: string): Record<string, unknown> => {
  try {
    const json: unknown = JSON.parse(text);
    return json && typeof json === 'object'
      ? (json as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
};

/** An error's message with its cause (fetch hides the reason there). */
const reasonOf = (error: unknown): string => {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return `${error.message}${cause}`;
};

/** The names and addresses one run uses, all carrying its id. */
export interface RunNames {
  runId: string;
  listName: string;
  templateName: string;
  campaignName: string;
  /** The simulator addresses, each with the run's `+label`. */
  success: string;
  bounce: string;
  complaint: string;
}

/**
 * The names of a run. The `+label` keeps each run's addresses new: a
 * bounce or complaint suppresses its address for the organization for
 * good, so a rerun with the bare addresses would have nobody to send to.
 */
export const runNamesOf = (runId: string): RunNames => {
  const address = (scenario: string) =>
    `${scenario}+${runId}@simulator.amazonses.com`;
  return {
    runId,
    listName: `Smoke test ${runId}`,
    templateName: `Smoke test ${runId}`,
    campaignName: `Smoke test ${runId}`,
    success: address('success'),
    bounce: address('bounce'),
    complaint: address('complaint'),
  };
};

/** A run id: `smoke-` and 10 base-36 characters, lower case (emails are). */
export const newRunId = (): string =>
  `smoke-${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;

/** What a run made, as far as it got. */
export interface Created {
  listId?: string;
  templateId?: string;
  campaignId?: string;
}

/** Everything a step reads and writes. */
export interface Journey {
  api: Api;
  names: RunNames;
  created: Created;
  timeoutMs: number;
  pollMs: number;
  sleep: (ms: number) => Promise<void>;
}

/** A step: it throws to fail, and may return a note for its line. */
export interface Step {
  name: string;
  run(journey: Journey): Promise<string | undefined>;
}

const RECIPIENTS = 3;

const CONTENT = [
  '<p>Hello {{firstName}},</p>',
  '<p>This is a smoke test of the email marketing service. Nothing to do.</p>',
  '<p><a href="{{unsubscribeUrl}}">Unsubscribe</a></p>',
].join('\n');

/**
 * Reads until `done` holds, every `pollMs`, for at most the run's timeout;
 * a timeout fails with what the last read showed.
 */
export const waitFor = async <T>(
  journey: Journey,
  read: () => Promise<T>,
  done: (value: T) => boolean,
  show: (value: T) => string,
): Promise<T> => {
  const deadline = Date.now() + journey.timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() >= deadline) {
      throw new SmokeFailure(
        `timed out after ${seconds(journey.timeoutMs)}: ${show(value)}`,
      );
    }
    await journey.sleep(journey.pollMs);
  }
};

/** GET /me: the key works, belongs to an owner or admin, and can send. */
export const checkKey: Step = {
  name: 'check key',
  async run({ api }) {
    const { data } = await api.request<{
      organization: { name: string };
      organizationRole: string;
      sending: { ready: boolean; blockers: string[] };
    }>('GET', '/me');
    const org = `${data.organization.name} (${data.organizationRole})`;
    if (data.organizationRole === 'member') {
      throw new SmokeFailure(
        `${org}: the journey creates a list, a template and a campaign, which needs an owner or admin key`,
      );
    }
    // The API cannot delete lists: stop before making one that cannot send.
    if (!data.sending.ready) {
      throw new SmokeFailure(
        `${org} is not ready to send; blockers: ${data.sending.blockers.join(', ')} (see the README's "Sending setup"); nothing was created`,
      );
    }
    return `${org}, ready to send`;
  },
};

/** POST /lists. */
export const createList: Step = {
  name: 'create list',
  async run({ api, names, created }) {
    const { data } = await api.request<{ id: string }>('POST', '/lists', {
      body: { name: names.listName },
      expect: 201,
    });
    created.listId = data.id;
    return names.listName;
  },
};

/**
 * POST /lists/{listId}/contacts/bulk: the three simulator addresses,
 * subscribed. The import sends nothing (no confirmation email, even where
 * the organization requires double opt-in) and starts no automation.
 */
export const importContacts: Step = {
  name: 'import contacts',
  async run({ api, names, created }) {
    const emails = [names.success, names.bounce, names.complaint];
    const { data } = await api.request<{
      created: number;
      rejected: number;
      errors: { email: string; reason: string }[];
    }>('POST', `/lists/${created.listId}/contacts/bulk`, {
      body: {
        contacts: emails.map((email) => ({ email, firstName: 'Smoke' })),
      },
    });
    if (data.created !== RECIPIENTS || data.rejected > 0) {
      const reasons = data.errors.map((e) => `${e.email}: ${e.reason}`);
      throw new SmokeFailure(
        `expected ${RECIPIENTS} contacts created, got ${data.created} created and ${data.rejected} rejected${reasons.length ? ` (${reasons.join('; ')})` : ''}`,
      );
    }
    return emails.join(', ');
  },
};

/** POST /templates. */
export const createTemplate: Step = {
  name: 'create template',
  async run({ api, names, created }) {
    const { data } = await api.request<{ id: string }>('POST', '/templates', {
      body: {
        name: names.templateName,
        defaultSubject: `Smoke test ${names.runId}`,
        content: CONTENT,
      },
      expect: 201,
    });
    created.templateId = data.id;
    return undefined;
  },
};

/** POST /campaigns: a draft whose audience is the three contacts. */
export const createCampaign: Step = {
  name: 'create campaign',
  async run({ api, names, created }) {
    const { data } = await api.request<CampaignView>('POST', '/campaigns', {
      body: {
        name: names.campaignName,
        templateId: created.templateId,
        listId: created.listId,
      },
      expect: 201,
    });
    created.campaignId = data.id;
    if (data.recipientCount !== RECIPIENTS) {
      throw new SmokeFailure(
        `expected recipientCount ${RECIPIENTS}, got ${data.recipientCount}`,
      );
    }
    return `${RECIPIENTS} recipients`;
  },
};

/** Why a send now answered 202 but left the campaign a draft. */
export const holdOf = (campaign: CampaignView): string => {
  const reason =
    campaign.lastHold?.reason ??
    (campaign.sendingEnabled ? 'quota_exceeded' : 'sending_disabled');
  switch (reason) {
    case 'sending_disabled':
      return 'sending_disabled: mass sending is switched off application-wide (operator: admin sending enable)';
    case 'quota_exceeded':
      return `quota_exceeded: the organization's 24-hour quota, or what the SES account has left, is below the ${campaign.recipientCount} recipients (operator: admin org quota)`;
    default:
      return `${reason}${campaign.lastHold?.blockers ? `: ${campaign.lastHold.blockers.join(', ')}` : ''}`;
  }
};

/**
 * POST /campaigns/{id}/send with `{}`: 202, and the campaign has left
 * draft. A 409 `sending.blocked` names the blockers; a held send (202, the
 * campaign still a draft) names the hold.
 */
export const sendCampaign: Step = {
  name: 'send campaign',
  async run({ api, created }) {
    const path = `/campaigns/${created.campaignId}`;
    const { data } = await api.request<{ status: string }>(
      'POST',
      `${path}/send`,
      { body: {}, expect: 202 },
    );
    const after = await api.request<CampaignView>('GET', path);
    if (after.data.status === 'draft') {
      throw new SmokeFailure(
        `202 ${data.status}, but the send was held and the campaign is still a draft — ${holdOf(after.data)}`,
      );
    }
    return `202 ${data.status}, campaign ${after.data.status}`;
  },
};

const progressOf = ({ status, progress: p }: CampaignView): string =>
  `status ${status}, progress ${p.sent} sent, ${p.failed} failed, ${p.skipped} skipped of ${p.total}`;

/** GET /campaigns/{id} until `sent`; `failed` ends the wait at once. */
export const waitUntilSent: Step = {
  name: 'wait until sent',
  async run(journey) {
    const { api, created } = journey;
    const campaign = await waitFor(
      journey,
      async () =>
        (
          await api.request<CampaignView>(
            'GET',
            `/campaigns/${created.campaignId}`,
          )
        ).data,
      (c) => c.status === 'sent' || c.status === 'failed',
      progressOf,
    );
    if (campaign.status === 'failed') {
      const f = campaign.failure;
      throw new SmokeFailure(
        `the campaign failed: ${f ? `${f.reason} — ${f.message}` : 'no reason given'} (${progressOf(campaign)})`,
      );
    }
    if (campaign.progress.sent !== RECIPIENTS) {
      throw new SmokeFailure(
        `expected ${RECIPIENTS} sent, ${progressOf(campaign)}`,
      );
    }
    return `${campaign.progress.sent} sent`;
  },
};

const countsOf = (s: CampaignStatsView): string =>
  `sent ${s.sent}, delivered ${s.delivered}, bounces ${s.bounces.total}, complaints ${s.complaints}`;

/**
 * GET /campaigns/{id}/stats until the SES events are counted: sent 3,
 * delivered ≥ 1, bounces ≥ 1, complaints ≥ 1 (they arrive on their own,
 * after the send).
 */
export const waitForStats: Step = {
  name: 'wait for stats',
  async run(journey) {
    const { api, created } = journey;
    const stats = await waitFor(
      journey,
      async () =>
        (
          await api.request<CampaignStatsView>(
            'GET',
            `/campaigns/${created.campaignId}/stats`,
          )
        ).data,
      (s) =>
        s.sent === RECIPIENTS &&
        s.delivered >= 1 &&
        s.bounces.total >= 1 &&
        s.complaints >= 1,
      (s) =>
        `${countsOf(s)} (expected sent ${RECIPIENTS} and at least one of each: are SES events reaching the events queue?)`,
    );
    return countsOf(stats);
  },
};

/**
 * GET /contacts?listId&status=bounced and =complained until the bounced
 * and the complained addresses are listed: suppressed by their events.
 */
export const checkSuppressed: Step = {
  name: 'check suppressed contacts',
  async run(journey) {
    const { api, names, created } = journey;
    const emailsWith = async (status: string) =>
      (
        await api.request<{ email: string }[]>(
          'GET',
          `/contacts?listId=${created.listId}&status=${status}&limit=100`,
        )
      ).data.map((c) => c.email);
    const found = await waitFor(
      journey,
      async () => ({
        bounced: await emailsWith('bounced'),
        complained: await emailsWith('complained'),
      }),
      (f) =>
        f.bounced.includes(names.bounce) &&
        f.complained.includes(names.complaint),
      (f) =>
        `bounced [${f.bounced.join(', ')}], complained [${f.complained.join(', ')}]; expected ${names.bounce} and ${names.complaint}`,
    );
    return `bounced ${found.bounced.join(', ')}; complained ${found.complained.join(', ')}`;
  },
};

/** The journey, in order. */
export const STEPS: readonly Step[] = [
  checkKey,
  createList,
  importContacts,
  createTemplate,
  createCampaign,
  sendCampaign,
  waitUntilSent,
  waitForStats,
  checkSuppressed,
];

/** What a cleanup action did, for its line. */
type CleanupOutcome =
  | { kept: false; note?: string }
  | { kept: true; why: string };

/** One cleanup action: it runs when the run made its object. */
interface Cleanup {
  name: string;
  applies(created: Created): boolean;
  run(journey: Journey): Promise<CleanupOutcome>;
}

/**
 * The cleanup, in order. A draft campaign is deleted; one that left draft
 * cannot be (it is the record of what went out). The template is deleted.
 * The API deletes neither contacts nor lists: the contacts still
 * subscribed are unsubscribed, so no later send reaches them, and the list
 * stays, named by the run.
 */
export const CLEANUPS: readonly Cleanup[] = [
  {
    name: 'delete campaign',
    applies: (c) => c.campaignId !== undefined,
    async run({ api, created }) {
      const path = `/campaigns/${created.campaignId}`;
      const { data } = await api.request<CampaignView>('GET', path);
      if (data.status !== 'draft') {
        return {
          kept: true,
          why: `campaign ${data.id} (${data.status}): only drafts can be deleted; a campaign that left draft is the record of what went out`,
        };
      }
      await api.request('DELETE', path);
      return { kept: false };
    },
  },
  {
    name: 'delete template',
    applies: (c) => c.templateId !== undefined,
    async run({ api, created }) {
      await api.request('DELETE', `/templates/${created.templateId}`);
      return { kept: false };
    },
  },
  {
    name: 'unsubscribe contacts',
    applies: (c) => c.listId !== undefined,
    async run({ api, created }) {
      const { data } = await api.request<{ id: string }[]>(
        'GET',
        `/contacts?listId=${created.listId}&status=subscribed&limit=100`,
      );
      for (const contact of data) {
        await api.request('POST', `/contacts/${contact.id}/unsubscribe`);
      }
      return {
        kept: false,
        note: `${data.length} left subscribed, now unsubscribed (kept: an erasure is for a person's request, not a cleanup)`,
      };
    },
  },
  {
    name: 'delete list',
    applies: (c) => c.listId !== undefined,
    async run({ names, created }) {
      return {
        kept: true,
        why: `list "${names.listName}" (${created.listId}): the API has no DELETE /lists`,
      };
    },
  },
];

const seconds = (ms: number) =>
  ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;

/** A step's line: a mark, the step, what it said. */
const line = (mark: 'ok' | 'FAIL' | 'keep', text: string) =>
  `${mark.padEnd(4)} ${text}`;

/** The result of a run. */
export interface SmokeResult {
  passed: boolean;
  /** The step that failed, if one did. */
  failedStep?: string;
  /** Cleanup actions that failed. */
  cleanupFailures: string[];
  created: Created;
  names: RunNames;
}

/**
 * Runs the journey step by step, printing one line each and stopping at
 * the first failure, then the cleanup (in a `finally`), each action on its
 * own line; a cleanup failure is printed and never hides the step's.
 */
export const runSmoke = async (
  options: SmokeOptions,
  io: SmokeIo,
  steps: readonly Step[] = STEPS,
): Promise<SmokeResult> => {
  const sleep = io.sleep ?? delay;
  const journey: Journey = {
    api: apiAt(options.api, options.key, { fetch: io.fetch, sleep }),
    names: runNamesOf(io.runId ?? newRunId()),
    created: {},
    timeoutMs: options.timeoutMs,
    pollMs: io.pollMs ?? 2000,
    sleep,
  };
  const result: SmokeResult = {
    passed: false,
    cleanupFailures: [],
    created: journey.created,
    names: journey.names,
  };
  const started = Date.now();
  io.print(`smoke run ${journey.names.runId} against ${options.api}`);
  try {
    for (const step of steps) {
      const at = Date.now();
      try {
        const note = await step.run(journey);
        io.print(
          line(
            'ok',
            `${step.name}${note ? `: ${note}` : ''} (${seconds(Date.now() - at)})`,
          ),
        );
      } catch (error) {
        result.failedStep = step.name;
        io.print(line('FAIL', `${step.name}: ${messageOf(error)}`));
        return result;
      }
    }
    result.passed = true;
    return result;
  } finally {
    for (const cleanup of CLEANUPS) {
      if (!cleanup.applies(journey.created)) continue;
      const at = Date.now();
      const name = `cleanup: ${cleanup.name}`;
      try {
        const outcome = await cleanup.run(journey);
        io.print(
          outcome.kept
            ? line('keep', outcome.why)
            : line(
                'ok',
                `${name}${outcome.note ? `: ${outcome.note}` : ''} (${seconds(Date.now() - at)})`,
              ),
        );
      } catch (error) {
        result.cleanupFailures.push(cleanup.name);
        io.print(line('FAIL', `${name}: ${messageOf(error)}`));
      }
    }
    const took = seconds(Date.now() - started);
    io.print(
      result.passed && result.cleanupFailures.length === 0
        ? `passed: ${steps.length} steps in ${took}`
        : result.passed
          ? `failed: every step passed, but ${result.cleanupFailures.length} cleanup action(s) failed (${took})`
          : `failed at "${result.failedStep}" (${took})`,
    );
  }
};

const messageOf = (error: unknown): string =>
  error instanceof SmokeFailure
    ? error.message
    : `unexpected error: ${reasonOf(error)}`;

/** The exit code of a run: 0 only when every step and cleanup passed. */
export const exitCodeOf = (result: SmokeResult): number =>
  result.passed && result.cleanupFailures.length === 0 ? 0 : 1;

/**
 * The command: reads the arguments (usage mistakes: exit 2 with the
 * usage; `--help`: the usage, exit 0), runs the journey, answers the exit
 * code.
 */
export const main = async (
  argv: readonly string[],
  io: SmokeIo & { printError(line: string): void },
): Promise<number> => {
  let invocation: Invocation;
  try {
    invocation = parseArgs(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.printError(`${error.message}\n\n${USAGE}`);
    return 2;
  }
  if (invocation.help) {
    io.print(USAGE);
    return 0;
  }
  return exitCodeOf(await runSmoke(invocation.options, io));
};
