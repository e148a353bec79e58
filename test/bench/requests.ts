/**
 * `npm run bench:requests`: what each API call costs in DynamoDB, as AWS
 * would bill it. A local stack is seeded in process (an organization with a
 * 5,000-contact list, tags, templates, topics, identities, domains, a
 * segment, a campaign, a sequence and a sign-up page), then every GET and
 * the main writes go through the same handlers as `npm start`, over HTTP,
 * each twice: with a cold key cache (a fresh container) and warm. Every
 * DynamoDB call goes through the benchmarks' meter (`dynamo-meter.ts`) on
 * the real document client; the table prints requests, operations, items
 * read and capacity per call.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { endpointGroups } from '../../functions/groups.ts';
import { ensureDnsRecordsFile } from '../../infra/local/dns-records.ts';
import { ensureTable } from '../../infra/local/dynamodb.ts';
import { localEngines, startEngines } from '../../infra/local/engines.ts';
import { createGateway } from '../../infra/local/gateway.ts';
import { addMember, createApiKey } from '../../shared/access/admin.ts';
import { encodeCursor } from '../../shared/audience/contact-cursor.ts';
import { createTag } from '../../shared/audience/tags.ts';
import { nextBatch } from '../../shared/campaigns/dispatch.ts';
import { tableDefinition } from '../../shared/db/table.ts';
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
import { type DynamoCall, meterDynamo } from './dynamo-meter.ts';
import { seedList } from './seed-list.ts';

const CONTACTS = Number(process.env.BENCH_CONTACTS ?? 5_000);
/** Digits of a contact's number in its email (sorted as the number). */
const DIGITS = Math.max(5, String(CONTACTS - 1).length);
const emailOf = (i: number) =>
  `reader${String(i).padStart(DIGITS, '0')}@bench.example`;
const TAGS = ['vip', 'beta', 'press', 'partner', 'staff'];

const calls: DynamoCall[] = [];

/** A JSON call over HTTP to the gateway. */
const caller =
  (origin: string, key: string) =>
  async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${origin}/api/v1${path}`, {
      method,
      headers: {
        'x-api-key': key,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
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
  const server: Server = createGateway(endpointGroups, deps);
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

const round = (n: number) => (Number.isInteger(n) ? String(n) : n.toFixed(1));

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
    // A new container's deps: every in-memory cache cold.
    const containerDeps = () =>
      localDeps({
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
      ['GET /tags', '/tags'],
      ['GET /templates', '/templates'],
      ['GET /templates/{id}', `/templates/${template.id}`],
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
        'POST /campaigns',
        () =>
          write('POST', '/campaigns', {
            name: `C ${n++}`,
            templateId: template.id,
            listId: list.id,
          }),
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
    for (const [what, act] of writes) {
      const warm = await measure(act);
      rows.push({ what, cold: warm, warm });
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
  } finally {
    await running.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
};

await main();
