/**
 * Driven adapter: the address book. Identities are items of the
 * organization's partition; a head item holds the default and a version,
 * and every change of the book is one transaction conditional on that
 * version, so "exactly one default" holds whatever the interleaving.
 */
import * as v from 'valibot';
import { itemSchema, parseItem } from '../../db/items.ts';
import { type KeyRange, keys } from '../../db/keys.ts';
import { ConflictError } from '../../errors.ts';
import type { Identity, IdentityBook } from '../../sending/model.ts';
import type {
  IdentityRepository,
  SendingProfile,
} from '../../sending/ports.ts';
import { domainFromItem } from './dynamo-domain-repository.ts';
import { entity } from './dynamo-entity.ts';
import { type DynamoTable, queryOnce, transactWrite } from './dynamo-table.ts';

const IdentityItem = itemSchema('Identity', {
  id: v.string(),
  senderEmail: v.string(),
  senderName: v.optional(v.string(), ''),
  createdAt: v.string(),
});

/** The head of the book: its version and its default identity. */
const IdentityBookItem = itemSchema('IdentityBook', {
  version: v.number(),
  defaultId: v.optional(v.string()),
});

const fromItem = (item: Record<string, unknown>): Identity =>
  parseItem(IdentityItem, item);

/** The book among the items of a range: its identities and its head. */
const bookOf = (
  orgId: string,
  items: Record<string, unknown>[],
): IdentityBook => {
  const identityPrefix = keys.addressBook(orgId).from;
  const head = items.find((item) => item.SK === keys.identityBook(orgId).SK);
  // A book never written reads empty, at version 0.
  const { version, defaultId } = head
    ? parseItem(IdentityBookItem, head)
    : { version: 0, defaultId: undefined };
  return {
    identities: items
      .filter((item) => String(item.SK).startsWith(identityPrefix))
      .map(fromItem),
    ...(defaultId !== undefined ? { defaultId } : {}),
    version,
  };
};

/** The address book and its head item. */
export class DynamoIdentityRepository implements IdentityRepository {
  private readonly identities;
  private readonly heads;

  constructor(private readonly table: DynamoTable) {
    this.identities = entity(table, IdentityItem);
    this.heads = entity(table, IdentityBookItem);
  }

  async getBook(orgId: string): Promise<IdentityBook> {
    // One Query reads the identities and the head together, as one
    // consistent answer (a book is a few items, far below a Query's 1 MB).
    return bookOf(orgId, await this.queryRange(keys.addressBook(orgId)));
  }

  async getProfile(orgId: string): Promise<SendingProfile> {
    // The domains sort just before the book: one Query reads both.
    const items = await this.queryRange(keys.sendingProfile(orgId));
    const domainPrefix = keys.domainsOfOrganization(orgId).skPrefix;
    return {
      book: bookOf(orgId, items),
      domains: items
        .filter((item) => String(item.SK).startsWith(domainPrefix))
        .map(domainFromItem),
    };
  }

  private async queryRange(range: KeyRange) {
    const { items } = await queryOnce(this.table, range, { consistent: true });
    return items;
  }

  async saveBook(
    orgId: string,
    before: IdentityBook,
    after: IdentityBook,
  ): Promise<void> {
    const previous = new Map(before.identities.map((i) => [i.id, i]));
    await transactWrite(this.table, [
      this.heads.putTx(
        keys.identityBook(orgId),
        {
          version: before.version + 1,
          ...(after.defaultId ? { defaultId: after.defaultId } : {}),
        },
        {
          if: (w) =>
            before.version === 0
              ? w.missing()
              : w.eq('version', before.version),
          otherwise: (cause) =>
            new ConflictError(
              'identities.changed',
              'The address book changed meanwhile; read it again',
              { cause },
            ),
        },
      ),
      ...after.identities
        .filter(
          (identity) =>
            JSON.stringify(previous.get(identity.id)) !==
            JSON.stringify(identity),
        )
        .map((identity) =>
          this.identities.putTx(keys.identity(orgId, identity.id), identity),
        ),
      ...before.identities
        .filter(
          (identity) => !after.identities.some((i) => i.id === identity.id),
        )
        .map((identity) =>
          this.identities.deleteTx(keys.identity(orgId, identity.id)),
        ),
    ]);
  }
}
