/**
 * The suppression list on the embedded engine (issue 31, §3): suppressions
 * keyed by address key, each written with its log entry and the log's
 * count in one transaction; the log newest first, by page or from a
 * position; a lift removing both and recording itself; a lookup reading
 * one key per address once the organization is rekeyed; and the rekey of
 * suppressions stored by address by older versions.
 */
import { DeleteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { DynamoDeliveryRepository } from '../../../../shared/adapters/aws/dynamo-delivery-repository.ts';
import { importContacts } from '../../../../shared/audience/bulk-import.ts';
import { addContact } from '../../../../shared/audience/contacts.ts';
import type { Suppression } from '../../../../shared/audience/ports.ts';
import { keys } from '../../../../shared/db/keys.ts';
import { addressKeyOf } from '../../../../shared/delivery/address-key.ts';
import { rekeySuppressions } from '../../../../shared/organizations/organizations.ts';
import { orgWithList, uniqueEmail } from '../../../support/audience.ts';
import {
  createTestDeps,
  scanTable,
  TEST_ADDRESS_KEY_SECRET,
  testEngineClient,
} from '../../../support/dynamo.ts';

/** The embedded engine's client, recording each command and its input. */
const recordingClient = () => {
  const client = testEngineClient();
  const sent: { command: string; input: Record<string, unknown> }[] = [];
  client.middlewareStack.add(
    (next, context) => async (args) => {
      sent.push({
        command: String(context.commandName),
        input: args.input as Record<string, unknown>,
      });
      return next(args);
    },
    { step: 'initialize', name: 'recordCommands' },
  );
  return { client, sent };
};

/** A repository as a new container builds it, over its own client. */
const freshRepository = (tableName: string) => {
  const { client, sent } = recordingClient();
  return {
    repository: new DynamoDeliveryRepository(
      { client, tableName },
      async () => TEST_ADDRESS_KEY_SECRET,
    ),
    sent,
  };
};

const keyOf = (email: string) => addressKeyOf(TEST_ADDRESS_KEY_SECRET, email);

const suppression = (
  email: string,
  at: string,
  reason: Suppression['reason'] = 'manual',
): Suppression => ({ email, reason, at, source: 'api' });

/** The keys a BatchGetItem asked for, across its requests. */
const keysRead = (
  sent: { command: string; input: Record<string, unknown> }[],
) =>
  sent
    .filter((s) => s.command === 'BatchGetItemCommand')
    .flatMap((s) =>
      Object.values(
        s.input.RequestItems as Record<string, { Keys: { SK: string }[] }>,
      ).flatMap((request) => request.Keys.map((key) => key.SK)),
    );

describe('the suppression list on DynamoDB', () => {
  it('writes a suppression under its address key with its log entry and the count, in one transaction; the first reason stays', async () => {
    // Arrange
    const { deps, tableName } = await createTestDeps();
    const { orgId } = await orgWithList(deps);
    const ana = uniqueEmail('ana');
    const { repository, sent } = freshRepository(tableName);

    // Act
    const first = await repository.suppress(orgId, [
      suppression(ana, '2026-11-22T10:00:00.000Z', 'bounce'),
    ]);
    const again = await repository.suppress(orgId, [
      suppression(ana, '2026-11-22T11:00:00.000Z', 'complaint'),
    ]);

    // Assert
    expect(first.added).toEqual([ana]);
    expect(again.added).toEqual([]);
    // What stays: the first reason.
    expect(again.stored.get(ana)?.reason).toBe('bounce');
    expect(
      sent.filter((s) => s.command === 'TransactWriteItemsCommand'),
    ).toHaveLength(1);
    const items = await scanTable(tableName);
    const stored = items.filter((item) =>
      String(item.PK).startsWith(`ORG#${orgId}#SUPPRESSION`),
    );
    expect(stored.map((item) => [item.PK, item.SK]).sort()).toEqual(
      [
        [`ORG#${orgId}#SUPPRESSION`, `ADDR#${keyOf(ana)}`],
        [`ORG#${orgId}#SUPPRESSION`, 'REKEYED'],
        [
          `ORG#${orgId}#SUPPRESSIONLOG`,
          `LOG#2026-11-22T10:00:00.000Z#${keyOf(ana)}`,
        ],
        [`ORG#${orgId}#SUPPRESSIONLOG`, 'LOG$count'],
      ].sort(),
    );
    // The address is an attribute, never part of a key.
    expect(stored.some((item) => String(item.SK).includes(ana))).toBe(false);
    expect((await repository.suppressions(orgId, [ana])).get(ana)?.reason).toBe(
      'bounce',
    );
  });

  it('lists newest first, by page number or after a position, with the total', async () => {
    // Arrange
    const { deps, tableName } = await createTestDeps();
    const { orgId } = await orgWithList(deps);
    const { repository } = freshRepository(tableName);
    const emails = [0, 1, 2, 3, 4].map((i) => uniqueEmail(`n${i}`));
    await repository.suppress(
      orgId,
      emails.map((email, i) =>
        suppression(email, `2026-11-2${i}T10:00:00.000Z`),
      ),
    );

    // Act
    const firstPage = await repository.suppressionLog(orgId, {
      page: 1,
      limit: 2,
    });
    const secondPage = await repository.suppressionLog(orgId, {
      page: 2,
      limit: 2,
    });
    const afterFirst = await repository.suppressionLog(orgId, {
      page: 2,
      limit: 2,
      after: firstPage.last ?? '',
    });
    const lastPage = await repository.suppressionLog(orgId, {
      page: 3,
      limit: 2,
      after: afterFirst.last ?? '',
    });

    // Assert
    const newestFirst = [...emails].reverse();
    expect(firstPage.total).toBe(5);
    expect(firstPage.items.map((s) => s.email)).toEqual(
      newestFirst.slice(0, 2),
    );
    expect(secondPage.items.map((s) => s.email)).toEqual(
      newestFirst.slice(2, 4),
    );
    expect(afterFirst).toEqual(secondPage);
    expect(lastPage.items.map((s) => s.email)).toEqual(newestFirst.slice(4));
    expect(lastPage.total).toBe(5);
  });

  it('a lift removes the suppression and its log entry, moves the counts and records the lift; a stale lift is a conflict', async () => {
    // Arrange
    const { deps, tableName } = await createTestDeps();
    const { orgId } = await orgWithList(deps);
    const { repository } = freshRepository(tableName);
    const ana = uniqueEmail('ana');
    const bob = uniqueEmail('bob');
    await repository.suppress(orgId, [
      suppression(ana, '2026-11-22T10:00:00.000Z', 'complaint'),
      suppression(bob, '2026-11-22T10:00:01.000Z'),
    ]);
    const read = (await repository.suppressions(orgId, [ana])).get(ana);
    if (!read) throw new Error('not suppressed');

    // Act
    const lift = await repository.lift(orgId, read, {
      at: '2026-11-23T09:00:00.000Z',
      by: 'key-1',
      forced: true,
    });
    const again = await repository
      .lift(orgId, read, {
        at: '2026-11-23T09:00:01.000Z',
        by: 'key-1',
        forced: true,
      })
      .catch((error: unknown) => error);

    // Assert
    expect(lift).toEqual({
      email: ana,
      reason: 'complaint',
      source: 'api',
      suppressedAt: '2026-11-22T10:00:00.000Z',
      liftedAt: '2026-11-23T09:00:00.000Z',
      liftedBy: 'key-1',
      forced: true,
    });
    expect(again).toMatchObject({ code: 'write.contended' });
    expect((await repository.suppressions(orgId, [ana])).size).toBe(0);
    const log = await repository.suppressionLog(orgId, { page: 1, limit: 10 });
    expect(log.items.map((s) => s.email)).toEqual([bob]);
    expect(log.total).toBe(1);
    const lifts = await repository.liftLog(orgId, { page: 1, limit: 10 });
    expect(lifts.items).toEqual([lift]);
    expect(lifts.total).toBe(1);
    const items = await scanTable(tableName);
    expect(
      items.filter((item) => String(item.SK).includes(keyOf(ana))),
    ).toEqual([
      expect.objectContaining({
        SK: `LIFT#2026-11-23T09:00:00.000Z#${keyOf(ana)}`,
      }),
    ]);
  });

  it('reads one key per address once it has seen the organization rekeyed', async () => {
    // Arrange: an organization created by this version is rekeyed.
    const { deps, tableName } = await createTestDeps();
    const { orgId } = await orgWithList(deps);
    const ana = uniqueEmail('ana');
    const bob = uniqueEmail('bob');
    await deps.delivery.suppress(orgId, [
      suppression(ana, '2026-11-22T10:00:00.000Z', 'bounce'),
    ]);
    const { repository, sent } = freshRepository(tableName);

    // Act
    const first = await repository.suppressions(orgId, [ana, bob]);
    const firstKeys = keysRead(sent);
    sent.length = 0;
    const second = await repository.suppressions(orgId, [ana, bob], {
      consistent: false,
    });

    // Assert: the first read learns the marker; the next reads the keys.
    expect([...first.keys()]).toEqual([ana]);
    expect([...second.keys()]).toEqual([ana]);
    expect(firstKeys).toContain('REKEYED');
    expect(keysRead(sent).sort()).toEqual(
      [`ADDR#${keyOf(ana)}`, `ADDR#${keyOf(bob)}`].sort(),
    );
  });
});

describe('the rekey of suppressions stored by address', () => {
  /** An organization as an older version left it: suppressions by address. */
  const olderOrganization = async () => {
    const test = await createTestDeps();
    const { orgId, listId } = await orgWithList(test.deps);
    const client = testEngineClient();
    // Created before the address keys: no marker.
    await test.dynamo.send(
      new DeleteCommand({
        TableName: test.tableName,
        Key: keys.suppressionsRekeyed(orgId),
      }),
    );
    const legacy = async (email: string, reason: string, at: string) => {
      await client.send(
        new PutCommand({
          TableName: test.tableName,
          Item: {
            ...keys.legacySuppression(orgId, email),
            _type: 'Suppression',
            email,
            reason,
            at,
            ...(reason === 'bounce' ? { messageId: 'm-1' } : {}),
          },
        }),
      );
    };
    return { ...test, orgId, listId, legacy };
  };

  it('finds old items before the rekey: lookups, a subscription refused, an import created suppressed', async () => {
    // Arrange
    const { deps, orgId, listId, legacy, tableName } =
      await olderOrganization();
    const old = uniqueEmail('old');
    await legacy(old, 'complaint', '2026-01-02T03:04:05.000Z');
    const { repository } = freshRepository(tableName);

    // Act
    const found = (await deps.delivery.suppressions(orgId, [old])).get(old);
    const fresh = await repository.suppressions(orgId, [old]);
    const added = await addContact(deps, orgId, listId, { email: old });
    const report = await importContacts(deps, orgId, listId, [
      { email: old, status: 'subscribed' },
    ]);

    // Assert
    expect(found).toEqual({
      email: old,
      reason: 'complaint',
      at: '2026-01-02T03:04:05.000Z',
    });
    expect(fresh.get(old)?.reason).toBe('complaint');
    expect(added.contact.status).toBe('complained');
    expect(report.created).toBe(0);
    expect((await deps.contacts.get(orgId, listId, old))?.status).toBe(
      'complained',
    );
  });

  it('moves each old item to its address key with a log entry, marks the organization, and is idempotent', async () => {
    // Arrange
    const { deps, admin, orgId, legacy, tableName } = await olderOrganization();
    const [a, b, c] = ['a', 'b', 'c'].map((n) => uniqueEmail(n)) as [
      string,
      string,
      string,
    ];
    await legacy(a, 'bounce', '2026-01-01T00:00:00.000Z');
    await legacy(b, 'complaint', '2026-01-02T00:00:00.000Z');
    await legacy(c, 'bounce', '2026-01-03T00:00:00.000Z');
    // Suppressed again by this version before the rekey: the old item
    // is found, so its first reason stays.
    const addedBefore = await deps.delivery.suppress(orgId, [
      suppression(c, '2026-02-01T00:00:00.000Z'),
    ]);

    // Act
    const report = await rekeySuppressions(admin, { orgId });
    const again = await rekeySuppressions(admin, { orgId });

    // Assert
    expect(addedBefore.added).toEqual([]);
    expect(addedBefore.stored.get(c)?.reason).toBe('bounce');
    expect(report).toEqual({ orgId, moved: 3, dropped: 0 });
    expect(again).toEqual({ orgId, moved: 0, dropped: 0 });
    const items = await scanTable(tableName);
    const sortKeys = items
      .filter((item) => item.PK === `ORG#${orgId}#SUPPRESSION`)
      .map((item) => item.SK)
      .sort();
    expect(sortKeys).toEqual(
      [
        `ADDR#${keyOf(a)}`,
        `ADDR#${keyOf(b)}`,
        `ADDR#${keyOf(c)}`,
        'REKEYED',
      ].sort(),
    );
    const { repository, sent } = freshRepository(tableName);
    const log = await repository.suppressionLog(orgId, { page: 1, limit: 10 });
    expect(log.total).toBe(3);
    expect(log.items.map((s) => [s.email, s.reason])).toEqual([
      [c, 'bounce'],
      [b, 'complaint'],
      [a, 'bounce'],
    ]);
    const moved = (await repository.suppressions(orgId, [a])).get(a);
    expect(moved).toEqual({
      email: a,
      reason: 'bounce',
      at: '2026-01-01T00:00:00.000Z',
      messageId: 'm-1',
    });
    sent.length = 0;
    await repository.suppressions(orgId, [a, b]);
    expect(keysRead(sent).sort()).toEqual(
      [`ADDR#${keyOf(a)}`, `ADDR#${keyOf(b)}`].sort(),
    );
  });

  it('drops an old item whose address key holds one already (written by an older version after this one)', async () => {
    // Arrange
    const { deps, admin, orgId, legacy, tableName } = await olderOrganization();
    const d = uniqueEmail('d');
    await deps.delivery.suppress(orgId, [
      suppression(d, '2026-02-01T00:00:00.000Z'),
    ]);
    await legacy(d, 'bounce', '2026-02-02T00:00:00.000Z');

    // Act
    const report = await rekeySuppressions(admin, { orgId });

    // Assert
    expect(report).toEqual({ orgId, moved: 0, dropped: 1 });
    const { repository } = freshRepository(tableName);
    expect((await repository.suppressions(orgId, [d])).get(d)?.reason).toBe(
      'manual',
    );
    const log = await repository.suppressionLog(orgId, { page: 1, limit: 10 });
    expect(log.total).toBe(1);
  });

  it('lifts an old item before the rekey: moved, then lifted', async () => {
    // Arrange
    const { deps, orgId, legacy } = await olderOrganization();
    const e = uniqueEmail('e');
    await legacy(e, 'bounce', '2026-03-01T00:00:00.000Z');
    const read = (await deps.delivery.suppressions(orgId, [e])).get(e);
    if (!read) throw new Error('not found');

    // Act
    const lift = await deps.delivery.lift(orgId, read, {
      at: '2026-03-02T00:00:00.000Z',
      by: 'key-9',
      forced: false,
    });

    // Assert
    expect(lift.suppressedAt).toBe('2026-03-01T00:00:00.000Z');
    expect((await deps.delivery.suppressions(orgId, [e])).size).toBe(0);
    expect(
      (await deps.delivery.suppressionLog(orgId, { page: 1, limit: 10 })).total,
    ).toBe(0);
  });
});
