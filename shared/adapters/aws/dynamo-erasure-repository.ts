/**
 * Driven adapter: the audit records of erasures in their organization's
 * partition (`ERASURE#<time-ordered id>`), counted by their collection's
 * counter (`ERASURE$count`). A record holds counts and who erased, never
 * the person.
 */
import * as v from 'valibot';
import { itemSchema } from '../../db/items.ts';
import { keys } from '../../db/keys.ts';
import type { Page, PageRequest } from '../../ports.ts';
import {
  ERASURE_TARGETS,
  type Erasure,
  type ErasureRepository,
} from '../../privacy/erasure-ports.ts';
import {
  moveCollectionCounter,
  pageOfCollection,
} from './dynamo-collections.ts';
import { entity } from './dynamo-entity.ts';
import { type DynamoTable, transactWrite } from './dynamo-table.ts';

const Count = v.pipe(v.number(), v.integer(), v.minValue(0));

export const ErasureItem = itemSchema('Erasure', {
  id: v.string(),
  erasedAt: v.string(),
  erasedBy: v.object({ keyId: v.string(), userId: v.string() }),
  target: v.picklist(ERASURE_TARGETS),
  contacts: Count,
  // Absent from records written before the ids were kept.
  contactIds: v.optional(v.array(v.string()), () => []),
  journeys: Count,
  topicOptOuts: Count,
  items: Count,
});

/** Erasure records and their counter. */
export class DynamoErasureRepository implements ErasureRepository {
  private readonly erasures;

  constructor(private readonly table: DynamoTable) {
    this.erasures = entity(table, ErasureItem);
  }

  async record(orgId: string, erasure: Erasure): Promise<void> {
    await transactWrite(this.table, [
      this.erasures.putTx(keys.erasure(orgId, erasure.id), erasure, {
        if: (w) => w.missing(),
      }),
      moveCollectionCounter(this.table, keys.erasuresOfOrganization(orgId), 1),
    ]);
  }

  get(orgId: string, erasureId: string): Promise<Erasure | undefined> {
    return this.erasures.get(keys.erasure(orgId, erasureId), {
      consistent: true,
    });
  }

  async page(orgId: string, request: PageRequest): Promise<Page<Erasure>> {
    const page = await pageOfCollection(
      this.table,
      keys.erasuresOfOrganization(orgId),
      request,
    );
    return {
      items: page.items.map((item) => this.erasures.parse(item)),
      total: page.total,
    };
  }
}
