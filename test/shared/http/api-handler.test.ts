import {
  ConditionalCheckFailedException,
  DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import { SESv2Client } from '@aws-sdk/client-sesv2';
import {
  BatchGetCommand,
  DynamoDBDocumentClient,
  GetCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import {
  endpointGroups,
  type GroupHandler,
} from '../../../functions/groups.ts';
import { formatApiKey, hashApiKey } from '../../../shared/access/api-key.ts';
import type { Role } from '../../../shared/access/model.ts';
import { SesMailer } from '../../../shared/adapters/aws/ses-mailer.ts';
import { keys } from '../../../shared/db/keys.ts';
import { logger } from '../../../shared/observability.ts';
import { buildDeps } from '../../../shared/runtime/deps.ts';
import { fixedClock } from '../../support/dynamo.ts';
import { jsonOf, lambdaContext, restEvent } from '../../support/events.ts';
import {
  unreachableDns,
  unreachableProvider,
} from '../../support/unreachable.ts';

// Arrange (shared): the real pipeline over a mocked DynamoDB edge.
const dynamo = DynamoDBDocumentClient.from(
  new DynamoDBClient({ region: 'us-east-1' }),
);
const dynamoMock = mockClient(dynamo);
const ORG = '01a20000-0000-7000-8000-000000000001';
const KEY_ID = '01a20000-0000-7000-8000-0000000000aa';
const API_KEY = formatApiKey(KEY_ID, 'A'.repeat(43));

const handlerOf = (group: string, clock = fixedClock()) => {
  const found = endpointGroups.find((g) => g.name === group);
  if (!found) throw new Error(`no group ${group}`);
  // The group's own deps, built from its bindings as on Lambda.
  const deps = buildDeps(found.bindings, {
    table: () => ({ dynamo, tableName: 'table', apiKeyCacheTtlSeconds: 10 }),
    clock,
    mailer: () => new SesMailer(new SESv2Client({ region: 'us-east-1' })),
    provider: () => unreachableProvider,
    dns: () => unreachableDns,
    linkSecret: () => async () => 'x'.repeat(32),
    addressKeySecret: () => async () => 'k'.repeat(32),
    endpoints: () => ({
      publicApiUrl: 'https://api.example.test/api/v1',
      appFromAddress: 'no-reply@example.test',
      pagesUrl: 'https://pages.example.test',
    }),
  });
  const handler = deps.then((built) =>
    found.createHandler(built as Parameters<typeof found.createHandler>[0]),
  );
  return async (...args: Parameters<GroupHandler>) => (await handler)(...args);
};

const storeKey = (
  role: Role,
  extra: Record<string, unknown> = {},
  count = 1,
) => {
  // The key lookup reads the key with the application settings item (here
  // absent: the defaults).
  dynamoMock.on(BatchGetCommand).resolves({
    Responses: {
      table: [
        {
          ...keys.apiKey(KEY_ID),
          keyId: KEY_ID,
          orgId: ORG,
          userId: 'user-1',
          role,
          secretHash: hashApiKey(API_KEY),
          createdAt: '2026-11-01T00:00:00.000Z',
          ...extra,
        },
      ],
    },
  });
  // The key's rolling log: `count` admissions, the oldest at 10:00:00.
  const log = (admitted: number) =>
    Object.fromEntries(
      Array.from({ length: admitted }, (_, i) => [
        `t${i}`,
        Date.parse('2026-11-22T10:00:00.000Z') + i,
      ]),
    );
  if (count <= 120) {
    dynamoMock.on(UpdateCommand).resolves({ Attributes: log(count) });
  } else {
    dynamoMock.on(UpdateCommand).rejects(
      new ConditionalCheckFailedException({
        message: 'The conditional request failed',
        $metadata: {},
        // As DynamoDB returns it: attribute values.
        Item: Object.fromEntries(
          Object.entries(log(120)).map(([name, t]) => [name, { N: `${t}` }]),
        ),
      }),
    );
  }
};

const noLists = () => dynamoMock.on(QueryCommand).resolves({ Items: [] });

const listsEvent = (overrides: Parameters<typeof restEvent>[0] | object) =>
  restEvent({
    method: 'GET',
    resource: '/api/v1/lists',
    apiKey: API_KEY,
    ...overrides,
  });

describe('the request pipeline', () => {
  beforeEach(() => {
    dynamoMock.reset();
  });

  describe('authentication (Authentication 1–3)', () => {
    it('answers 401 without touching DynamoDB when x-api-key is missing', async () => {
      // Act
      const result = await handlerOf('lists')(
        listsEvent({ apiKey: undefined }),
        lambdaContext(),
      );
      // Assert
      expect(result.statusCode).toBe(401);
      expect(jsonOf(result)).toEqual({
        error: expect.stringContaining('x-api-key'),
        code: 'auth.missingKey',
      });
      expect(dynamoMock.calls()).toHaveLength(0);
    });

    it('answers 401 to a malformed key without any read', async () => {
      const result = await handlerOf('lists')(
        listsEvent({ apiKey: 'not-a-key' }),
        lambdaContext(),
      );
      expect(result.statusCode).toBe(401);
      expect(dynamoMock.calls()).toHaveLength(0);
    });

    it('answers 401 to an unknown key after one read', async () => {
      dynamoMock.on(BatchGetCommand).resolves({ Responses: { table: [] } });
      const result = await handlerOf('lists')(listsEvent({}), lambdaContext());
      expect(result.statusCode).toBe(401);
      expect(jsonOf(result).code).toBe('auth.invalidKey');
      expect(dynamoMock.calls()).toHaveLength(1);
      expect(dynamoMock.commandCalls(BatchGetCommand)).toHaveLength(1);
    });

    it('answers 401 to a revoked key', async () => {
      storeKey('owner', { revokedAt: '2026-11-20T00:00:00.000Z' });
      const result = await handlerOf('lists')(listsEvent({}), lambdaContext());
      expect(result.statusCode).toBe(401);
    });

    it('answers 401 to a value whose id exists but whose secret differs', async () => {
      storeKey('owner');
      const forged = formatApiKey(KEY_ID, 'B'.repeat(43));
      const result = await handlerOf('lists')(
        listsEvent({ apiKey: forged }),
        lambdaContext(),
      );
      expect(result.statusCode).toBe(401);
    });

    it('resolves a key with one read, then serves it from the cache until the TTL ends', async () => {
      // Arrange
      storeKey('member');
      const clock = fixedClock();
      const handler = handlerOf('me', clock);
      dynamoMock.on(GetCommand, { Key: keys.organization(ORG) }).resolves({
        Item: {
          id: ORG,
          name: 'Acme',
          slug: 'acme',
          sendingAllowed: false,
          createdAt: '2026-11-01T00:00:00.000Z',
        },
      });
      dynamoMock.on(QueryCommand).resolves({ Items: [] });
      // Act
      await handler(
        restEvent({ method: 'GET', resource: '/api/v1/me', apiKey: API_KEY }),
        lambdaContext(),
      );
      await handler(
        restEvent({ method: 'GET', resource: '/api/v1/me', apiKey: API_KEY }),
        lambdaContext(),
      );
      clock.advance(10_001);
      await handler(
        restEvent({ method: 'GET', resource: '/api/v1/me', apiKey: API_KEY }),
        lambdaContext(),
      );
      // Assert
      const keyReads = dynamoMock
        .commandCalls(BatchGetCommand)
        .filter((c) =>
          c.args[0].input.RequestItems?.table?.Keys?.some(
            (k) => k.PK === keys.apiKey(KEY_ID).PK,
          ),
        );
      expect(keyReads).toHaveLength(2);
    });
  });

  describe('rate limit (Limits: 120 requests per key in any 60 seconds)', () => {
    it('sends RateLimit headers on a success', async () => {
      storeKey('owner', {}, 7);
      noLists();
      const result = await handlerOf(
        'lists',
        fixedClock('2026-11-22T10:00:15.000Z'),
      )(listsEvent({}), lambdaContext());
      expect(result.statusCode).toBe(200);
      expect(result.headers).toMatchObject({
        'RateLimit-Limit': '120',
        'RateLimit-Remaining': '113',
        'RateLimit-Reset': '45',
      });
      expect(result.headers).not.toHaveProperty('Retry-After');
    });

    it('answers the 121st request with 429 and Retry-After, and does nothing', async () => {
      // Arrange
      storeKey('owner', {}, 121);
      // Act
      const result = await handlerOf(
        'lists',
        fixedClock('2026-11-22T10:00:50.000Z'),
      )(
        listsEvent({ method: 'POST', body: { name: 'News' } }),
        lambdaContext(),
      );
      // Assert
      expect(result.statusCode).toBe(429);
      expect(jsonOf(result).code).toBe('rateLimit.exceeded');
      expect(result.headers).toMatchObject({
        'RateLimit-Remaining': '0',
        'Retry-After': '10',
      });
      expect(dynamoMock.commandCalls(TransactWriteCommand)).toHaveLength(0);
    });

    it('counts the request in the rolling log of its key', async () => {
      storeKey('owner');
      noLists();
      await handlerOf('lists', fixedClock('2026-11-22T10:07:30.000Z'))(
        listsEvent({}),
        lambdaContext(),
      );
      // After the key's last use (the container's first request of it).
      const [mark, count] = dynamoMock.commandCalls(UpdateCommand);
      expect(mark?.args[0].input.Key).toEqual(keys.apiKeyLastUse(KEY_ID));
      expect(count?.args[0].input.Key).toEqual(keys.rateLog(KEY_ID));
    });
  });

  describe('body and validation (Conventions; Errors 400)', () => {
    it('answers 400, not 500, to malformed JSON', async () => {
      storeKey('owner');
      const result = await handlerOf('lists')(
        listsEvent({ method: 'POST', rawBody: '{"name":' }),
        lambdaContext(),
      );
      expect(result.statusCode).toBe(400);
      expect(jsonOf(result).details).toEqual([
        { field: 'body', message: 'must be valid JSON' },
      ]);
    });

    it('answers 415 to a body that is not JSON', async () => {
      storeKey('owner');
      const result = await handlerOf('lists')(
        listsEvent({
          method: 'POST',
          rawBody: 'name=x',
          contentType: 'application/x-www-form-urlencoded',
        }),
        lambdaContext(),
      );
      expect(result.statusCode).toBe(415);
    });

    it.each([
      'APPLICATION/JSON',
      'application/json; charset=UTF-8',
      'application/json;charset=utf-8',
      'Application/Problem+JSON',
    ])('A12: media types are case-insensitive: %s is JSON', async (type) => {
      storeKey('owner');
      const result = await handlerOf('lists')(
        listsEvent({ method: 'POST', body: { name: '' }, contentType: type }),
        lambdaContext(),
      );
      // The body was read: validation names the field inside it.
      expect(result.statusCode).toBe(400);
      expect(jsonOf(result).details).toEqual([
        { field: 'name', message: 'must not be empty' },
      ]);
    });

    it.each([
      'text/plain',
      'application/json; charset=latin1',
      'application/jsonx',
      'json',
    ])('A12: answers 415 to %s, whatever the body holds', async (type) => {
      storeKey('owner');
      const result = await handlerOf('lists')(
        listsEvent({ method: 'POST', body: { name: 'x' }, contentType: type }),
        lambdaContext(),
      );
      expect(result.statusCode).toBe(415);
      expect(jsonOf(result).code).toBe('request.mediaType');
      expect(dynamoMock.commandCalls(TransactWriteCommand)).toHaveLength(0);
    });

    it('A12: answers 400 to malformed JSON sent as APPLICATION/JSON', async () => {
      storeKey('owner');
      const result = await handlerOf('lists')(
        listsEvent({
          method: 'POST',
          rawBody: '{"name":',
          contentType: 'APPLICATION/JSON',
        }),
        lambdaContext(),
      );
      expect(result.statusCode).toBe(400);
      expect(jsonOf(result).details).toEqual([
        { field: 'body', message: 'must be valid JSON' },
      ]);
    });

    it('names each invalid field in details', async () => {
      storeKey('owner');
      const result = await handlerOf('lists')(
        listsEvent({ method: 'POST', body: { name: '' } }),
        lambdaContext(),
      );
      expect(result.statusCode).toBe(400);
      expect(jsonOf(result)).toMatchObject({
        code: 'request.invalid',
        details: [{ field: 'name', message: 'must not be empty' }],
      });
    });

    it('answers 400 naming the body when a required body is missing', async () => {
      storeKey('owner');
      const result = await handlerOf('lists')(
        listsEvent({ method: 'POST' }),
        lambdaContext(),
      );
      expect(result.statusCode).toBe(400);
      expect(jsonOf(result).details?.[0]?.field).toBe('body');
    });

    it.each(['100001', '107374183', '99999999999999999999', '9'.repeat(400)])(
      'refuses page=%s (past 100,000: an offset no read should walk), naming page',
      async (page) => {
        storeKey('owner');
        const result = await handlerOf('lists')(
          listsEvent({ query: { page } }),
          lambdaContext(),
        );
        expect(result.statusCode).toBe(400);
        expect(jsonOf(result).details?.map((d) => d.field)).toEqual(['page']);
      },
    );

    it('validates query parameters: a limit over 100 is refused', async () => {
      storeKey('owner');
      const result = await handlerOf('lists')(
        listsEvent({ query: { limit: '101', page: '0' } }),
        lambdaContext(),
      );
      expect(result.statusCode).toBe(400);
      expect(
        jsonOf(result)
          .details?.map((d) => d.field)
          .sort(),
      ).toEqual(['limit', 'page']);
    });

    it('answers 400 naming the path parameter for a malformed id', async () => {
      storeKey('owner');
      const result = await handlerOf('lists')(
        restEvent({
          method: 'GET',
          resource: '/api/v1/lists/{listId}',
          params: { listId: 'nope' },
          apiKey: API_KEY,
        }),
        lambdaContext(),
      );
      expect(result.statusCode).toBe(400);
      expect(jsonOf(result).details?.[0]?.field).toBe('listId');
    });
  });

  describe('roles (Authentication 2 and 6)', () => {
    it('answers 403 to a member writing, and writes nothing', async () => {
      storeKey('member');
      const result = await handlerOf('lists')(
        listsEvent({ method: 'POST', body: { name: 'News' } }),
        lambdaContext(),
      );
      expect(result.statusCode).toBe(403);
      expect(jsonOf(result).code).toBe('auth.roleTooLow');
      // Every command sent: the key's read (with the application settings),
      // its last use (the container's first request of the key) and its
      // rate log, nothing else.
      const sent = dynamoMock.calls().map((call) => {
        const command = call.args[0] as {
          constructor: { name: string };
          input: {
            Key?: unknown;
            RequestItems?: Record<string, { Keys: unknown[] }>;
          };
        };
        return [
          command.constructor.name,
          command.input.Key ?? command.input.RequestItems?.table?.Keys,
        ];
      });
      expect(sent).toEqual([
        ['BatchGetCommand', [keys.apiKey(KEY_ID), keys.appSettings()]],
        ['UpdateCommand', keys.apiKeyLastUse(KEY_ID)],
        ['UpdateCommand', keys.rateLog(KEY_ID)],
      ]);
    });

    it('lets a member read', async () => {
      storeKey('member');
      noLists();
      const result = await handlerOf('lists')(listsEvent({}), lambdaContext());
      expect(result.statusCode).toBe(200);
    });
  });

  describe('scopes (issue 32)', () => {
    /** The commands sent, each with the key(s) it names. */
    const sentCommands = () =>
      dynamoMock.calls().map((call) => {
        const command = call.args[0] as {
          constructor: { name: string };
          input: {
            Key?: unknown;
            RequestItems?: Record<string, { Keys: unknown[] }>;
          };
        };
        return [
          command.constructor.name,
          command.input.Key ?? command.input.RequestItems?.table?.Keys,
        ];
      });

    it('answers 403 auth.scopeMissing, naming the scope, to a key outside its scopes, before its body is read, and writes nothing', async () => {
      // Arrange: an owner key narrowed to the campaigns.
      storeKey('owner', { scopes: new Set(['campaigns']) });
      // Act: a body that would be a 400, on a route of the audience.
      const result = await handlerOf('lists')(
        listsEvent({ method: 'POST', body: { name: '' } }),
        lambdaContext(),
      );
      // Assert
      expect(result.statusCode).toBe(403);
      expect(jsonOf(result)).toEqual({
        error:
          'This operation needs the audience scope; your key is narrowed to campaigns',
        code: 'auth.scopeMissing',
      });
      expect(sentCommands()).toEqual([
        ['BatchGetCommand', [keys.apiKey(KEY_ID), keys.appSettings()]],
        ['UpdateCommand', keys.apiKeyLastUse(KEY_ID)],
        ['UpdateCommand', keys.rateLog(KEY_ID)],
      ]);
    });

    it('lets a read key take every GET, and refuses it a write', async () => {
      // Arrange
      storeKey('owner', { scopes: new Set(['read']) });
      noLists();
      const handle = handlerOf('lists');
      // Act
      const read = await handle(listsEvent({}), lambdaContext());
      const write = await handle(
        listsEvent({ method: 'POST', body: { name: 'News' } }),
        lambdaContext(),
      );
      // Assert
      expect(read.statusCode).toBe(200);
      expect(write.statusCode).toBe(403);
      expect(jsonOf(write).code).toBe('auth.scopeMissing');
      expect(dynamoMock.commandCalls(TransactWriteCommand)).toHaveLength(0);
    });

    it('names read beside the group’s scope on a GET', async () => {
      storeKey('owner', { scopes: new Set(['settings', 'campaigns']) });
      const result = await handlerOf('lists')(listsEvent({}), lambdaContext());
      expect(result.statusCode).toBe(403);
      expect(jsonOf(result).error).toBe(
        'This operation needs the audience scope (or read, as a GET); your key is narrowed to campaigns, settings',
      );
    });

    it('lets a key take the routes of its scope, and checks the role first', async () => {
      // Arrange
      storeKey('admin', { scopes: new Set(['audience']) });
      dynamoMock.on(TransactWriteCommand).resolves({});
      // Act
      const asAdmin = await handlerOf('lists')(
        listsEvent({ method: 'POST', body: { name: 'News' } }),
        lambdaContext(),
      );
      storeKey('member', { scopes: new Set(['campaigns']) });
      const asMember = await handlerOf('lists')(
        listsEvent({ method: 'POST', body: { name: 'News' } }),
        lambdaContext(),
      );
      // Assert
      expect(asAdmin.statusCode).toBe(201);
      expect(jsonOf(asMember).code).toBe('auth.roleTooLow');
    });
  });

  describe('last use of a key (issue 32)', () => {
    it('marks a key used at most once an hour per container', async () => {
      // Arrange
      storeKey('owner');
      noLists();
      const clock = fixedClock('2026-11-22T10:00:00.000Z');
      const handle = handlerOf('lists', clock);
      const marks = () =>
        dynamoMock
          .commandCalls(UpdateCommand)
          .filter(
            (call) => call.args[0].input.Key?.SK === keys.apiKeyLastUse('').SK,
          )
          .map((call) =>
            Object.values(call.args[0].input.ExpressionAttributeValues ?? {}),
          );
      // Act: at 10:00, 10:59:59, then 11:00.
      await handle(listsEvent({}), lambdaContext());
      clock.advance(3_599_000);
      await handle(listsEvent({}), lambdaContext());
      clock.advance(1000);
      await handle(listsEvent({}), lambdaContext());
      // Assert: two marks, each on the condition that the stored one is
      // an hour old.
      expect(marks()).toEqual([
        expect.arrayContaining([
          '2026-11-22T10:00:00.000Z',
          '2026-11-22T09:00:00.000Z',
        ]),
        expect.arrayContaining([
          '2026-11-22T11:00:00.000Z',
          '2026-11-22T10:00:00.000Z',
        ]),
      ]);
    });

    it('answers the request when the mark cannot be written, and logs why', async () => {
      // Arrange: the mark's write fails; the rate log's works.
      storeKey('owner');
      noLists();
      dynamoMock
        .on(UpdateCommand, { Key: keys.apiKeyLastUse(KEY_ID) })
        .rejects(new Error('throttled'));
      const warn = vi.spyOn(logger, 'warn').mockImplementation(() => {});
      // Act
      const result = await handlerOf('lists')(listsEvent({}), lambdaContext());
      // Assert
      expect(result.statusCode).toBe(200);
      expect(warn).toHaveBeenCalledWith(
        'Could not record the last use of an API key',
        expect.objectContaining({ keyId: KEY_ID }),
      );
      warn.mockRestore();
    });
  });

  describe('envelope and error mapping (Conventions; Errors)', () => {
    it('wraps success as {success: true, data}', async () => {
      storeKey('admin');
      dynamoMock.on(TransactWriteCommand).resolves({});
      const result = await handlerOf('lists')(
        listsEvent({ method: 'POST', body: { name: '  News  ' } }),
        lambdaContext(),
      );
      expect(result.statusCode).toBe(201);
      expect(jsonOf(result)).toEqual({
        success: true,
        data: {
          id: expect.any(String),
          name: 'News',
          createdAt: '2026-11-22T10:00:10.000Z',
        },
      });
    });

    it('answers 404 for a route the group does not declare', async () => {
      storeKey('owner');
      const result = await handlerOf('me')(listsEvent({}), lambdaContext());
      expect(result.statusCode).toBe(404);
    });

    it('hides an unexpected failure behind an opaque 500, logged with its cause', async () => {
      const logged = vi.spyOn(logger, 'error').mockImplementation(() => {});
      storeKey('owner');
      dynamoMock.on(QueryCommand).rejects(new Error('secret internals'));
      const result = await handlerOf('lists')(listsEvent({}), lambdaContext());
      expect(result.statusCode).toBe(500);
      expect(result.body).not.toContain('secret');
      expect(jsonOf(result)).toEqual({
        error: expect.any(String),
        code: 'internal',
      });
      expect(result.headers).toHaveProperty('RateLimit-Limit', '120');
      expect(logged).toHaveBeenCalledWith(
        'Unexpected error',
        expect.objectContaining({
          error: expect.objectContaining({ message: 'secret internals' }),
        }),
      );
      logged.mockRestore();
    });
  });
});
