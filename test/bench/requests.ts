/**
 * `npm run bench:requests`: what each API call costs in DynamoDB, as AWS
 * would bill it. A local stack is seeded in process (an organization with a
 * 5,000-contact list, tags, custom fields, templates (one merging fields),
 * topics, identities, domains, a segment, a campaign, a sequence and a
 * sign-up page), then every GET and
 * the main writes go through the same handlers as `npm start`, over HTTP,
 * each twice: with a cold key cache (a fresh container) and warm. Then a
 * hosted sign-up page, asking no custom field and asking five: its view
 * and a sign-up through its form. Every
 * DynamoDB call goes through the benchmarks' meter (`dynamo-meter.ts`) on
 * the real document client; the table prints requests, operations, items
 * read and capacity per call.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { recordActivityOf } from '../../functions/contact-changes/consumer.ts';
import { endpointGroups, pageGroups } from '../../functions/groups.ts';
import { ensureDnsRecordsFile } from '../../infra/local/dns-records.ts';
import { ensureTable } from '../../infra/local/dynamodb.ts';
import { localEngines, startEngines } from '../../infra/local/engines.ts';
import { createGateway } from '../../infra/local/gateway.ts';
import { addMember, createApiKey } from '../../shared/access/admin.ts';
import { mailActivityOf } from '../../shared/activity/mail-activity.ts';
import { contactImageOf } from '../../shared/adapters/aws/dynamo-contact-repository.ts';
import { encodeCursor } from '../../shared/audience/contact-cursor.ts';
import { addContact } from '../../shared/audience/contacts.ts';
import { createList } from '../../shared/audience/lists.ts';
import { createTag } from '../../shared/audience/tags.ts';
import { nextBatch } from '../../shared/campaigns/dispatch.ts';
import { type Campaign, NEW_DRAFT } from '../../shared/campaigns/model.ts';
import { keys } from '../../shared/db/keys.ts';
import { tableDefinition } from '../../shared/db/table.ts';
import { recordSesEvent } from '../../shared/delivery/events.ts';
import type { SesEvent } from '../../shared/delivery/ses-event.ts';
import type { Deps } from '../../shared/deps.ts';
import {
  createOrganization,
  setSendingAllowed,
} from '../../shared/organizations/organizations.ts';
import { buildAdminDeps } from '../../shared/runtime/admin.ts';
import {
  localDeps,
  localDynamo,
  noEdgeKeyRegistry,
} from '../../shared/runtime/local.ts';
import { createSequence } from '../../shared/sequences/heads.ts';
import { type DynamoCall, meterDynamo, sizeOf } from './dynamo-meter.ts';
import { seedList } from './seed-list.ts';

const CONTACTS = Number(process.env.BENCH_CONTACTS ?? 5_000);
/** Digits of a contact's number in its email (sorted as the number). */
const DIGITS = Math.max(5, String(CONTACTS - 1).length);
const emailOf = (i: number) =>
  `reader${String(i).padStart(DIGITS, '0')}@bench.example`;
const TAGS = ['vip', 'beta', 'press', 'partner', 'staff'];
/** Campaigns sent to the exported address (`BENCH_EXPORT_CAMPAIGNS`). */
const EXPORT_CAMPAIGNS = Number(process.env.BENCH_EXPORT_CAMPAIGNS ?? 100);

const calls: DynamoCall[] = [];

/** A JSON call over HTTP to the gateway. */
const caller =
  (origin: string, key: string) =>
  async (
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ) => {
    const response = await fetch(`${origin}/api/v1${path}`, {
      method,
      headers: {
        'x-api-key': key,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const json = (await response.json()) as { data?: unknown };
    if (response.status >= 400) {
      throw new Error(
        `${method} ${path}: ${response.status} ${JSON.stringify(json)}`,
      );
    }
    return json.data as Record<string, unknown> & { id: string };
  };

/** A gateway over the deps: a fresh one has cold key caches. */
const serve = async (deps: Deps) => {
  const server: Server = createGateway(
    [...endpointGroups, ...pageGroups],
    deps,
  );
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { origin, close: () => new Promise((done) => server.close(done)) };
};

interface Figures {
  calls: DynamoCall[];
  /** Requests, but for the rate limiter's refused slot writes. */
  requests: number;
  /**
   * The rate limiter's refused slot writes: a container new to a key picks
   * a slot at random, taken with odds of the key's requests in the last
   * minute ÷ 120; the refusal returns the slots for the next try.
   */
  slotRetries: number;
  operations: string;
  items: number;
  rcu: number;
  wcu: number;
  writes: number;
  /** Wall time of the call, milliseconds. */
  ms: number;
}

/** The DynamoDB calls `act` made. */
const measure = async (act: () => Promise<unknown>): Promise<Figures> => {
  const from = calls.length;
  const start = performance.now();
  await act();
  const ms = performance.now() - start;
  const made = calls.slice(from);
  const counts = new Map<string, number>();
  for (const call of made) {
    const name = call.command.replace(/Command$/, '').replace(/Item(s)?$/, '');
    counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  const slotRetries = made.filter(
    (call) => call.refused && call.target.startsWith('RATE#'),
  ).length;
  return {
    calls: made,
    requests: made.length - slotRetries,
    slotRetries,
    operations: [...counts]
      .map(([name, n]) => (n > 1 ? `${name}×${n}` : name))
      .join(' '),
    items: made.reduce((sum, call) => sum + call.items, 0),
    rcu: made.reduce((sum, call) => sum + call.rcu, 0),
    wcu: made.reduce((sum, call) => sum + call.wcu, 0),
    writes: made.filter(
      (call) => call.wcu > 0 && !call.label.startsWith('rate'),
    ).length,
    ms,
  };
};

/** One measure as both columns (a call made warm only). */
const twice = (figures: Figures) => ({ cold: figures, warm: figures });

const round = (n: number) => (Number.isInteger(n) ? String(n) : n.toFixed(1));

/** What one event of a contact's activity cost, as measured. */
interface ActivityRow {
  what: string;
  figures: Figures;
}

const main = async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'bench-requests-'));
  const providerStateFile = join(dataDir, 'provider.json');
  const dnsRecordsFile = join(dataDir, 'dns.json');
  await ensureDnsRecordsFile(dnsRecordsFile);
  const running = await startEngines(
    localEngines({ providerStateFile, dnsRecordsFile }),
  );
  try {
    const { dynamodb, mailbox, dns } = running.engines;
    const dynamo = localDynamo(dynamodb.endpoint);
    meterDynamo(dynamo, calls);
    const tableName = 'bench-requests';
    await ensureTable(dynamo, tableName, tableDefinition);
    // The key's rate window (120 requests a minute) moves on a minute
    // before each part that writes much: the bench makes more calls than
    // a key may in a minute, and a refused call would measure nothing.
    let skew = 0;
    const nextMinute = () => {
      skew += 61_000;
    };
    const clock = { now: () => new Date(Date.now() + skew) };
    // A new container's deps: every in-memory cache cold.
    const containerDeps = () =>
      localDeps({
        clock,
        dynamodb: dynamodb.endpoint,
        dynamo,
        tableName,
        mailbox: mailbox.url,
        dnsServer: dns.address,
        providerStateFile,
        publicApiUrl: 'http://127.0.0.1:3000/api/v1',
        linkSecret: 'bench-link-secret-bench-link-secret-0123',
        addressKeySecret: 'bench-address-key-bench-address-key-0123',
        apiKeyCacheTtlSeconds: 600,
        queues: { steps: { send: async () => {} } },
        // The hosted form's sign-ups are measured without waiting.
        signupForms: { minFillSeconds: 0 },
      });
    const deps = await containerDeps();
    const admin = {
      ...buildAdminDeps({
        dynamo,
        tableName,
        gatewayKeys: noEdgeKeyRegistry,
        addressKeySecret: async () =>
          'bench-address-key-bench-address-key-0123',
      }),
    };

    // Seed: an organization allowed to send, an owner and its key.
    console.error(`Seeding an organization with a ${CONTACTS}-contact list…`);
    const org = await createOrganization(deps, { name: 'Bench Co' });
    await setSendingAllowed(deps, { orgId: org.id }, true);
    await addMember(admin, {
      orgId: org.id,
      email: 'owner@bench.test',
      role: 'owner',
    });
    const { apiKey } = await createApiKey(admin, {
      orgId: org.id,
      email: 'owner@bench.test',
    });
    const seeding = await serve(deps);
    const call = caller(seeding.origin, apiKey);
    const list = await call('POST', '/lists', { name: 'Readers' });
    const tagIds = new Map<string, string>();
    for (const name of [...TAGS, 'rare']) {
      tagIds.set(name, (await createTag(deps, org.id, { name })).id);
    }
    const vip = tagIds.get('vip') ?? '';
    const rare = tagIds.get('rare') ?? '';
    const topic = await call('POST', '/topics', { name: 'Product news' });
    const started = performance.now();
    const contactId = await seedList(
      { client: dynamo, tableName },
      {
        orgId: org.id,
        listId: list.id,
        contacts: CONTACTS,
        emailOf,
        // One contact in ten carries a tag, in turn; one in 1,000 "rare".
        tagsOf: (i) => [
          ...(i % 10 === 0
            ? [tagIds.get(TAGS[(i / 10) % TAGS.length] ?? '') ?? '']
            : []),
          ...(i % 1000 === 1 ? [rare] : []),
        ],
        unsubscribed: (i) => i % 20 === 7,
        // One address in 100 declined the topic.
        declines: (i) => (i % 100 === 3 ? topic.id : undefined),
      },
      (done) => {
        if (done % 100_000 === 0 || done === CONTACTS) {
          console.error(
            `  ${done} contacts in ${Math.round((performance.now() - started) / 1000)} s`,
          );
        }
      },
    );
    calls.splice(0);
    const template = await call('POST', '/templates', {
      name: 'News',
      defaultSubject: 'News for {{firstName}}',
      content:
        '<p>Hello {{firstName}}</p><a href="{{unsubscribeUrl}}">Unsubscribe</a>',
    });
    // Three custom fields, and a template merging two of them.
    for (const key of ['company', 'plan', 'seats']) {
      await call('POST', '/fields', { key, label: key, type: 'text' });
    }
    const fieldsTemplate = await call('POST', '/templates', {
      name: 'Fields',
      defaultSubject: 'News for {{ fields.company }}',
      content:
        '<p>Hello {{firstName}} on {{ fields.plan }}</p><a href="{{unsubscribeUrl}}">Unsubscribe</a>',
    });
    for (let i = 0; i < 4; i++) {
      await call('POST', '/templates', {
        name: `Template ${i}`,
        defaultSubject: 'Hi',
        content: '<p>Hi</p><a href="{{unsubscribeUrl}}">x</a>',
      });
    }
    await call('POST', '/settings/identities', {
      senderEmail: 'news@bench.example',
      senderName: 'Bench',
    });
    await call('POST', '/settings/identities', {
      senderEmail: 'team@bench.example',
      isDefault: false,
    });
    const domain = await call('POST', '/domains', { domain: 'bench.example' });
    await call('POST', '/domains', { domain: 'mail.bench.example' });
    const segment = await call('POST', '/segments', {
      name: 'VIPs',
      listId: list.id,
      match: 'all',
      conditions: [{ field: 'tag', operator: 'has', value: vip }],
    });
    // A custom field that a segment names (its deletion is refused).
    const plan = await call('POST', '/fields', {
      key: 'level',
      label: 'Plan',
      type: 'option',
      options: ['free', 'pro'],
    });
    await call('POST', '/segments', {
      name: 'Pro plan',
      listId: list.id,
      match: 'all',
      conditions: [{ field: 'fields.level', operator: 'is', value: 'pro' }],
    });
    const campaign = await call('POST', '/campaigns', {
      name: 'November',
      templateId: template.id,
      listId: list.id,
    });
    /** Campaigns whose recipientCount each GET shows, by target. */
    const targeted: [string, Record<string, string>][] = [
      ['tag (2 %)', { tagId: vip }],
      ['tag (0.1 %)', { tagId: rare }],
      ['topic', { topicId: topic.id }],
      ['tag and topic', { tagId: vip, topicId: topic.id }],
      ['segment', { segmentId: segment.id }],
    ];
    const campaigns = new Map<string, string>();
    for (const [what, target] of targeted) {
      const made = await call('POST', '/campaigns', {
        name: what,
        templateId: template.id,
        listId: list.id,
        ...target,
      });
      campaigns.set(what, made.id);
    }
    await call('POST', '/sequences', {
      name: 'Welcome',
      triggerType: 'list_joined',
      triggerTargetId: list.id,
    });
    await call('POST', '/signup-pages', {
      name: 'Join',
      listId: list.id,
      theme: 'classic',
    });
    // The suppression list: 1,000 addresses added by hand, the list's first
    // 100 among them (their contacts unsubscribed), and two lifted.
    const suppressedOf = (i: number) =>
      i < 100 ? emailOf(i) : `gone${i}@bench.example`;
    await call('POST', '/suppressions', {
      addresses: Array.from({ length: 1000 }, (_, i) => ({
        email: suppressedOf(i),
      })),
    });
    for (const i of [998, 999]) {
      await call(
        'DELETE',
        `/suppressions/${encodeURIComponent(suppressedOf(i))}`,
      );
    }
    await seeding.close();
    // The tag index was seeded with the contacts (the stream is not read).
    const gets: [string, string][] = [
      ['GET /me', '/me'],
      ['GET /settings', '/settings'],
      ['GET /settings/identities', '/settings/identities'],
      ['GET /lists', '/lists'],
      ['GET /lists/{id}', `/lists/${list.id}`],
      ['GET /contacts (page 1)', `/contacts?listId=${list.id}`],
      ['GET /contacts (page 250)', `/contacts?listId=${list.id}&page=250`],
      ['GET /contacts?tagId', `/contacts?listId=${list.id}&tagId=${vip}`],
      [
        'GET /contacts?tagId&status',
        `/contacts?listId=${list.id}&tagId=${vip}&status=subscribed`,
      ],
      [
        'GET /contacts?search',
        `/contacts?listId=${list.id}&search=${emailOf(42).split('@')[0]}`,
      ],
      ['GET /contacts/{id}', `/contacts/${contactId}`],
      ['GET /contacts/{id}/export', `/contacts/${contactId}/export`],
      ['GET /tags', '/tags'],
      ['GET /templates', '/templates'],
      ['GET /templates/{id}', `/templates/${template.id}`],
      ['GET /templates/{id} (reads fields)', `/templates/${fieldsTemplate.id}`],
      ['GET /topics', '/topics'],
      ['GET /topics/{id}', `/topics/${topic.id}`],
      ['GET /domains', '/domains'],
      ['GET /domains/{id}', `/domains/${domain.id}`],
      ['GET /segments', '/segments'],
      ['GET /segments/{id}', `/segments/${segment.id}`],
      ['GET /campaigns', '/campaigns'],
      ['GET /campaigns/{id}', `/campaigns/${campaign.id}`],
      ...[...campaigns].map(([what, id]): [string, string] => [
        `GET /campaigns/{id} (${what})`,
        `/campaigns/${id}`,
      ]),
      ['GET /sequences', '/sequences'],
      ['GET /signup-pages', '/signup-pages'],
      ['GET /suppressions (page 1 of 998)', '/suppressions'],
      ['GET /suppressions (page 40)', '/suppressions?page=40'],
      [
        'GET /suppressions/{email}',
        `/suppressions/${encodeURIComponent(suppressedOf(500))}`,
      ],
      ['GET /suppressions/lifts', '/suppressions/lifts'],
    ];
    // The cursor the API gives for page 250 (walking there would take 249
    // calls, past the key's rate limit): after the 4,980th email.
    const cursor = encodeCursor(
      { listId: list.id, limit: 20 },
      emailOf(249 * 20 - 1),
      250,
    );
    gets.splice(
      gets.findIndex(([what]) => what === 'GET /contacts (page 250)') + 1,
      0,
      [
        'GET /contacts (cursor of page 250)',
        `/contacts?listId=${list.id}&cursor=${cursor}`,
      ],
    );
    const rows: { what: string; cold: Figures; warm: Figures }[] = [];
    for (const [what, path] of gets) {
      // A new container: its key cache and every other cache cold.
      const fresh = await serve(await containerDeps());
      const get = caller(fresh.origin, apiKey);
      const cold = await measure(() => get('GET', path));
      const warm = await measure(() => get('GET', path));
      await fresh.close();
      rows.push({ what, cold, warm });
    }
    // The dispatcher's batch: its walk from the list's start until a batch
    // of 250 is full (or the audience ends), as `dispatchCampaign` runs it.
    for (const [what, tagId] of [
      ['untagged', null],
      ['tag (2 %)', vip],
      ['tag (0.1 %)', rare],
    ] as const) {
      const stored = await deps.campaigns.get(
        org.id,
        tagId === null ? campaign.id : (campaigns.get(what) ?? ''),
      );
      if (!stored) throw new Error(`no campaign ${what}`);
      const figures = await measure(() =>
        nextBatch(
          { ...deps, queues: { send: { send: async () => {} } } },
          org.id,
          stored,
          () => true,
          null,
          250,
        ),
      );
      rows.push({
        what: `dispatcher batch of 250 (${what})`,
        cold: figures,
        warm: figures,
      });
    }
    const warmGateway = await serve(await containerDeps());
    nextMinute();
    const write = caller(warmGateway.origin, apiKey);
    await write('GET', '/me');
    let n = 0;
    const writes: [string, () => Promise<unknown>][] = [
      [
        'POST /lists/{id}/contacts',
        () =>
          write('POST', `/lists/${list.id}/contacts`, {
            email: `new${n++}@bench.example`,
            tags: ['vip'],
          }),
      ],
      [
        'PATCH /contacts/{id}',
        () =>
          write('PATCH', `/contacts/${contactId}`, {
            firstName: `Renamed ${n++}`,
          }),
      ],
      [
        'POST /contacts/{id}/tags',
        () =>
          write('POST', `/contacts/${contactId}/tags`, { name: `tag-${n++}` }),
      ],
      [
        'POST /templates',
        () =>
          write('POST', '/templates', {
            name: `T ${n++}`,
            defaultSubject: 'Hi',
            content: '<p>Hi</p><a href="{{unsubscribeUrl}}">x</a>',
          }),
      ],
      [
        'POST /render',
        () => write('POST', '/render', { templateId: template.id }),
      ],
      [
        'POST /render (reads fields)',
        () => write('POST', '/render', { templateId: fieldsTemplate.id }),
      ],
      [
        'POST /campaigns',
        () =>
          write('POST', '/campaigns', {
            name: `C ${n++}`,
            templateId: template.id,
            listId: list.id,
          }),
      ],
      [
        'POST /segments (a tag)',
        () =>
          write('POST', '/segments', {
            name: `S ${n++}`,
            listId: list.id,
            match: 'all',
            conditions: [{ field: 'tag', operator: 'has', value: vip }],
          }),
      ],
      [
        'POST /segments (a custom field)',
        () =>
          write('POST', '/segments', {
            name: `S ${n++}`,
            listId: list.id,
            match: 'all',
            conditions: [
              { field: 'fields.level', operator: 'is', value: 'pro' },
            ],
          }),
      ],
      [
        'DELETE /fields/{id} (named by segments: 409)',
        () =>
          write('DELETE', `/fields/${plan.id}`).then(
            () => {
              throw new Error('the field named by a segment was deleted');
            },
            (error: unknown) => {
              if (!String(error).includes('field.inUse')) throw error;
            },
          ),
      ],
    ];
    writes.push(
      [
        'POST /suppressions (1 new address, no contact)',
        () =>
          write('POST', '/suppressions', {
            addresses: [{ email: `more${n++}@bench.example` }],
          }),
      ],
      [
        'POST /suppressions (1 address with a contact)',
        () =>
          write('POST', '/suppressions', {
            addresses: [{ email: emailOf(200) }],
          }),
      ],
      [
        'POST /suppressions (100 new addresses)',
        () =>
          write('POST', '/suppressions', {
            addresses: Array.from({ length: 100 }, () => ({
              email: `batch${n++}@bench.example`,
            })),
          }),
      ],
      [
        'DELETE /suppressions/{email}',
        () =>
          write(
            'DELETE',
            `/suppressions/${encodeURIComponent(suppressedOf(500))}`,
          ),
      ],
    );
    // The same writes with an Idempotency-Key (issue 32): the first
    // request, then its repeat (the answer given again).
    const keyed = (
      what: string,
      path: string,
      body: unknown,
    ): [string, () => Promise<unknown>][] => {
      const headers = { 'Idempotency-Key': randomUUID() };
      const send = () => write('POST', path, body, headers);
      return [
        [`${what} (Idempotency-Key)`, send],
        [`${what} (Idempotency-Key, repeated)`, send],
      ];
    };
    const after = (what: string) =>
      writes.findIndex(([name]) => name === what) + 1;
    writes.splice(
      after('POST /lists/{id}/contacts'),
      0,
      ...keyed('POST /lists/{id}/contacts', `/lists/${list.id}/contacts`, {
        email: `keyed${n++}@bench.example`,
        tags: ['vip'],
      }),
    );
    writes.splice(
      after('POST /templates'),
      0,
      ...keyed('POST /templates', '/templates', {
        name: `T ${n++}`,
        defaultSubject: 'Hi',
        content: '<p>Hi</p><a href="{{unsubscribeUrl}}">x</a>',
      }),
      // Templates of 100 KB of HTML, without and with the key: the answer
      // (the whole template) is kept too, compressed — well for HTML, not
      // at all for random text.
      ...[
        ['100 KB of HTML', '<p>Dear reader, here is the news of the week.</p>'],
        ['100 KB of random text', ''],
      ].flatMap(([size, paragraph]) => {
        const content = () =>
          `${
            paragraph
              ? paragraph.repeat(2_000)
              : `<p>${randomBytes(75_000).toString('base64')}</p>`
          }<a href="{{unsubscribeUrl}}">x</a>`;
        const plain: [string, () => Promise<unknown>] = [
          `POST /templates (${size})`,
          () =>
            write('POST', '/templates', {
              name: `T ${n++}`,
              defaultSubject: 'Hi',
              content: content(),
            }),
        ];
        return [
          plain,
          ...keyed(`POST /templates (${size})`, '/templates', {
            name: `T ${n++}`,
            defaultSubject: 'Hi',
            content: content(),
          }),
        ];
      }),
    );
    for (const [what, act] of writes) {
      const warm = await measure(act);
      rows.push({ what, cold: warm, warm });
    }

    nextMinute();
    // A hosted page: its view (cold, then warm) and a sign-up, asking no
    // custom field and asking five (one of each type).
    const fields = [
      { key: 'form_company', label: 'Company', type: 'text' },
      { key: 'form_seats', label: 'Seats', type: 'number' },
      { key: 'form_birthday', label: 'Birthday', type: 'date' },
      { key: 'form_vip', label: 'VIP', type: 'boolean' },
      { key: 'tier', label: 'Tier', type: 'option', options: ['free', 'pro'] },
    ];
    for (const field of fields) await write('POST', '/fields', field);
    const hosted: [string, Record<string, string>][] = [];
    for (const [what, customFields, values] of [
      ['no custom field', [], {}],
      [
        '5 custom fields',
        fields.map(({ key }) => ({ key })),
        {
          'fields.form_company': 'Bench Ltd',
          'fields.form_seats': '12',
          'fields.form_birthday': '1990-01-31',
          'fields.form_vip': 'true',
          'fields.tier': 'pro',
        },
      ],
    ] as const) {
      const page = await write('POST', '/signup-pages', {
        name: `Hosted, ${what}`,
        listId: list.id,
        theme: 'classic',
        customFields,
      });
      await write('POST', `/signup-pages/${page.id}/publish`);
      hosted.push([
        `${new URL(String(page.publicUrl)).pathname}`,
        { what, ...values },
      ]);
    }
    for (const [path, { what, ...values }] of hosted) {
      const fresh = await serve(await containerDeps());
      const view = () => fetch(`${fresh.origin}${path}`);
      const cold = await measure(view);
      const warm = await measure(view);
      rows.push({ what: `GET /p/{org}/{page} (${what})`, cold, warm });
      const shown = await (await view()).text();
      const token = /name="form_token" value="([^"]+)"/.exec(shown)?.[1] ?? '';
      const signUp = await measure(async () => {
        const answer = await fetch(`${fresh.origin}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({
            form_token: token.replaceAll('&amp;', '&'),
            website: '',
            email: `hosted${n++}@bench.example`,
            ...values,
          }).toString(),
        });
        if (answer.status !== 200) {
          throw new Error(`sign-up (${what}): ${answer.status}`);
        }
      });
      rows.push({
        what: `POST /p/{org}/{page}: a sign-up (${what})`,
        cold: signUp,
        warm: signUp,
      });
      await fresh.close();
    }
    nextMinute();
    // An export as its organization grows: the address of contact 0 in
    // 20 lists, 5 sequences (each reads the enrolment of each of its 20
    // contacts), 100 campaigns (`BENCH_EXPORT_CAMPAIGNS`) sent to its
    // lists, each to it (its recipient item claimed and given SES's
    // message id).
    const person = emailOf(0);
    const exportOf = () => write('POST', '/exports', { email: person });
    rows.push({
      what: 'POST /exports (1 list)',
      ...twice(await measure(exportOf)),
    });
    const personLists = [list.id];
    const personIn = new Map([[list.id, contactId]]);
    for (let i = 1; i < 20; i++) {
      const made = await createList(deps, org.id, { name: `Export ${i}` });
      const { contact } = await addContact(deps, org.id, made.id, {
        email: person,
        doubleOptIn: false,
      });
      personLists.push(made.id);
      personIn.set(made.id, contact.id);
    }
    for (let i = 1; i < 5; i++) {
      await createSequence(deps, org.id, {
        name: `Journey ${i}`,
        triggerType: 'list_joined',
        triggerTargetId: personLists[i] ?? list.id,
      });
    }
    const now = new Date().toISOString();
    for (let i = 0; i < EXPORT_CAMPAIGNS; i++) {
      const draft: Campaign = {
        id: deps.ids.id(),
        name: `Sent ${i}`,
        subject: 'News for {{firstName}}',
        templateId: template.id,
        listId: personLists[i % personLists.length] ?? list.id,
        segmentId: null,
        tagId: null,
        sendingIdentityId: null,
        topicId: null,
        origin: null,
        ...NEW_DRAFT,
        createdAt: now,
        updatedAt: now,
      };
      await deps.campaigns.create(org.id, draft, { html: '<p>Hi</p>' });
      await deps.campaigns.update(org.id, draft, {
        ...draft,
        status: 'sent',
        startedAt: now,
        completedAt: now,
      });
      const recipient = personIn.get(draft.listId) ?? contactId;
      await deps.sends.claim(
        org.id,
        draft.id,
        { contactId: recipient, email: person, batch: 0 },
        'bench',
        new Date(Date.now() + 60_000),
        new Date(),
      );
      await deps.sends.recordOutcomes(org.id, draft.id, [
        { contactId: recipient, messageId: `ses-${draft.id}` },
      ]);
    }
    rows.push({
      what: `POST /exports (20 lists, 5 sequences, ${EXPORT_CAMPAIGNS} sent campaigns)`,
      ...twice(await measure(exportOf)),
    });
    nextMinute();
    // Each contact's activity (issue 31, §4): the writes of each kind of
    // event, made by the stream consumer (from a write's two images) and
    // the events consumer (from SES's event), and one page read.
    const activityRows: ActivityRow[] = [];
    const imageOf = async (email: string) => {
      const { Item } = await dynamo.send(
        new GetCommand({
          TableName: tableName,
          Key: keys.contact(org.id, list.id, email),
        }),
      );
      if (!Item) throw new Error(`no contact ${email}`);
      return contactImageOf(Item);
    };
    const consumed = async (
      what: string,
      act: () => Promise<unknown>,
    ): Promise<void> => {
      const figures = await measure(act);
      activityRows.push({ what, figures });
    };
    const follower = 'activity@bench.example';
    await write('POST', `/lists/${list.id}/contacts`, { email: follower });
    const joined = await imageOf(follower);
    await consumed('a subscription (1 event: `subscribed`)', () =>
      recordActivityOf(deps, {
        eventName: 'INSERT',
        sequenceNumber: '1',
        after: joined,
      }),
    );
    await write('POST', `/contacts/${joined.contact.id}/tags`, {
      name: 'activity-tag',
    });
    const tagged = await imageOf(follower);
    await consumed('a tag (1 event: `tagged`)', () =>
      recordActivityOf(deps, {
        eventName: 'MODIFY',
        sequenceNumber: '2',
        before: joined,
        after: tagged,
      }),
    );
    const sentAt = new Date().toISOString();
    const mail = {
      messageId: `bench-${joined.contact.id}`,
      timestamp: sentAt,
      destination: [follower],
      tags: {
        org: [org.id],
        kind: ['campaign'],
        contact: [joined.contact.id],
        campaign: [campaign.id],
      },
    };
    const sesEvents: [string, SesEvent][] = [
      ['a mail sent (SES `Send`)', { eventType: 'Send', mail }],
      [
        'its delivery (`Delivery`)',
        {
          eventType: 'Delivery',
          mail,
          delivery: { timestamp: sentAt, recipients: [follower] },
        },
      ],
      [
        'an open (`Open`)',
        { eventType: 'Open', mail, open: { timestamp: sentAt } },
      ],
      [
        'a click (`Click`)',
        {
          eventType: 'Click',
          mail,
          click: {
            timestamp: sentAt,
            link: 'https://bench.example/news/2026/november?utm_source=newsletter&utm_medium=email',
          },
        },
      ],
    ];
    for (const [what, event] of sesEvents) {
      await consumed(what, () => recordSesEvent(deps, event));
    }
    // A page of 25: the contact's 6 events and 24 opens more.
    await deps.activity.record(
      org.id,
      joined.contact.id,
      Array.from({ length: 24 }, (_, i) =>
        mailActivityOf(
          {
            type: 'opened',
            at: new Date(Date.parse(sentAt) + (i + 1) * 1000).toISOString(),
            message: {
              id: mail.messageId,
              kind: 'campaign',
              campaignId: campaign.id,
            },
          },
          [],
        ),
      ),
    );
    const { Items: stored = [] } = await dynamo.send(
      new QueryCommand({
        TableName: tableName,
        KeyConditionExpression: 'PK = :pk',
        ExpressionAttributeValues: {
          ':pk': keys.activityOfContact(org.id, joined.contact.id).PK,
        },
      }),
    );
    const activitySizes = [
      ...new Map(
        stored.map((item) => [String(item.type), sizeOf(item)] as const),
      ),
    ].map(([type, bytes]) => `${type} ${bytes}`);
    const activityPath = `/contacts/${joined.contact.id}/activity?limit=25`;
    {
      const fresh = await serve(await containerDeps());
      const get = caller(fresh.origin, apiKey);
      const cold = await measure(() => get('GET', activityPath));
      const warm = await measure(() => get('GET', activityPath));
      await fresh.close();
      rows.push({
        what: 'GET /contacts/{id}/activity (a page of 25)',
        cold,
        warm,
      });
      activityRows.push({ what: 'reading a page of 25 (warm)', figures: warm });
    }
    nextMinute();
    // Erasure (issue 31, §2): a person in one list with a tag, then the
    // person of the export (20 lists, 5 sequences, the sent campaigns).
    {
      const lone = 'erase-me@bench.example';
      await write('POST', `/lists/${list.id}/contacts`, {
        email: lone,
        tags: ['erase-tag'],
      });
      rows.push({
        what: 'POST /erasures (1 list, a tag)',
        ...twice(
          await measure(() => write('POST', '/erasures', { email: lone })),
        ),
      });
      rows.push({
        what: `POST /erasures (20 lists, 5 sequences, ${EXPORT_CAMPAIGNS} sent campaigns)`,
        ...twice(
          await measure(() => write('POST', '/erasures', { email: person })),
        ),
      });
    }
    await warmGateway.close();

    // BENCH_DETAIL=1: every call of every row, to see where requests go.
    if (process.env.BENCH_DETAIL) {
      for (const { what, cold, warm } of rows) {
        console.error(`\n${what}`);
        for (const [when, figures] of [
          ['cold', cold],
          ['warm', warm],
        ] as const) {
          for (const call of figures.calls) {
            const name = call.command.replace(/Command$/, '');
            console.error(`  ${when} ${name.padEnd(18)} ${call.target}`);
          }
          if (cold === warm) break;
        }
      }
    }

    const header =
      '| call | requests cold / warm | operations (warm) | items read | RCU | WCU | writes besides the rate counter | ms (warm) |';
    console.log(header);
    console.log('|---|---|---|---|---|---|---|---|');
    for (const { what, cold, warm } of rows) {
      console.log(
        `| ${what} | ${cold.requests}${cold.slotRetries ? ` (+${cold.slotRetries} slot retry)` : ''} / ${warm.requests}${warm.slotRetries ? ` (+${warm.slotRetries} slot retry)` : ''} | ${warm.operations} | ${warm.items} | ${round(warm.rcu)} | ${round(warm.wcu)} | ${Math.max(0, warm.writes - 1)} | ${Math.round(warm.ms)} |`,
      );
    }

    // The activity's own share of each event: the writes to a contact's
    // activity partition, beside everything the call wrote.
    console.log('');
    console.log(
      '| activity event | requests | WCU of the call | of which the activity | RCU |',
    );
    console.log('|---|---|---|---|---|');
    for (const { what, figures } of activityRows) {
      const mine = figures.calls.filter((call) =>
        call.written.some((w) => w.key.includes('#ACTIVITY')),
      );
      console.log(
        `| ${what} | ${figures.requests} | ${round(figures.wcu)} | ${round(
          mine.reduce((sum, call) => sum + call.wcu, 0),
        )} | ${round(figures.rcu)} |`,
      );
    }
    console.log(
      `\nActivity items of the bench contact, bytes (DynamoDB's count, keys included): ${activitySizes.join(', ')}`,
    );
  } finally {
    await running.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
};

await main();
