/**
 * Driven adapter: webhook endpoints in their organization's partition,
 * counted (and capped) by their collection's counter (`WEBHOOK$count`).
 * Every write is conditional on the endpoint's version and moves, in the
 * same transaction, the organization's subscription summary by what it
 * changes in the types its enabled endpoints take.
 */
import { keys } from '../../db/keys.ts';
import { RuleViolationError } from '../../errors.ts';
import type { Page, PageRequest } from '../../ports.ts';
import type { WebhookRepository } from '../../webhooks/delivery-ports.ts';
import {
  WEBHOOK_EVENT_TYPES,
  type WebhookEventType,
} from '../../webhooks/events.ts';
import { MAX_WEBHOOKS, type WebhookEndpoint } from '../../webhooks/model.ts';
import {
  moveCollectionCounter,
  pageOfCollection,
} from './dynamo-collections.ts';
import { entity } from './dynamo-entity.ts';
import {
  type DynamoTable,
  failedConditions,
  onFailedCondition,
  type TransactItem,
  transactWrite,
} from './dynamo-table.ts';
import {
  WebhookEndpointItem,
  WebhookHealthItem,
} from './dynamo-webhook-items.ts';
import {
  subscriptionCounter,
  WebhookSubscriptionsItem,
} from './dynamo-webhook-subscriptions.ts';

/** The types an endpoint adds to the summary: none while disabled. */
const takes = (endpoint: WebhookEndpoint | undefined): WebhookEventType[] =>
  endpoint?.enabled ? endpoint.events : [];

/** What a write moves in the summary: +1, -1 per type, nothing unchanged. */
const summaryMoves = (
  before: WebhookEndpoint | undefined,
  after: WebhookEndpoint | undefined,
): Record<string, number> => {
  const was = new Set(takes(before));
  const is = new Set(takes(after));
  const moves: Record<string, number> = {};
  for (const type of WEBHOOK_EVENT_TYPES) {
    const by = Number(is.has(type)) - Number(was.has(type));
    if (by !== 0) moves[subscriptionCounter(type)] = by;
  }
  return moves;
};

/** Endpoints, their counter, and the subscription summary. */
export class DynamoWebhookRepository implements WebhookRepository {
  private readonly endpoints;
  private readonly summaries;
  private readonly healths;

  constructor(private readonly table: DynamoTable) {
    this.endpoints = entity(table, WebhookEndpointItem);
    this.summaries = entity(table, WebhookSubscriptionsItem);
    this.healths = entity(table, WebhookHealthItem);
  }

  /** The summary's move in a transaction, if the write moves it. */
  private summaryTx(
    orgId: string,
    before: WebhookEndpoint | undefined,
    after: WebhookEndpoint | undefined,
  ): TransactItem[] {
    const moves = summaryMoves(before, after);
    if (Object.keys(moves).length === 0) return [];
    return [
      this.summaries.updateTx(keys.webhookSubscriptions(orgId), {
        add: moves,
      }),
    ];
  }

  async create(orgId: string, endpoint: WebhookEndpoint): Promise<void> {
    await transactWrite(this.table, [
      this.endpoints.putTx(keys.webhook(orgId, endpoint.id), endpoint, {
        if: (w) => w.missing(),
      }),
      onFailedCondition(
        moveCollectionCounter(
          this.table,
          keys.webhooksOfOrganization(orgId),
          1,
          { cap: MAX_WEBHOOKS },
        ),
        (cause) =>
          new RuleViolationError(
            'webhook.limitReached',
            `An organization has at most ${MAX_WEBHOOKS} webhook endpoints; delete one first`,
            { cause },
          ),
      ),
      ...this.summaryTx(orgId, undefined, endpoint),
    ]);
  }

  get(orgId: string, webhookId: string): Promise<WebhookEndpoint | undefined> {
    return this.endpoints.get(keys.webhook(orgId, webhookId), {
      consistent: true,
    });
  }

  async page(
    orgId: string,
    request: PageRequest,
  ): Promise<Page<WebhookEndpoint>> {
    const page = await pageOfCollection(
      this.table,
      keys.webhooksOfOrganization(orgId),
      request,
    );
    return {
      items: page.items.map((item) => this.endpoints.parse(item)),
      total: page.total,
    };
  }

  all(orgId: string): Promise<WebhookEndpoint[]> {
    return this.endpoints.all(keys.webhooksOfOrganization(orgId), {
      consistent: true,
    });
  }

  async update(
    orgId: string,
    before: WebhookEndpoint,
    after: WebhookEndpoint,
    options: { resetHealth?: boolean } = {},
  ): Promise<boolean> {
    const write = this.endpoints.putTx(keys.webhook(orgId, after.id), after, {
      if: (w) => w.eq('version', before.version),
    });
    const others = [
      ...this.summaryTx(orgId, before, after),
      ...(options.resetHealth
        ? [this.healths.deleteTx(keys.webhookHealth(orgId, after.id))]
        : []),
    ];
    return this.writeOnVersion(write, others);
  }

  async delete(orgId: string, endpoint: WebhookEndpoint): Promise<boolean> {
    return this.writeOnVersion(
      this.endpoints.deleteTx(keys.webhook(orgId, endpoint.id), {
        if: (w) => w.eq('version', endpoint.version),
      }),
      [
        moveCollectionCounter(
          this.table,
          keys.webhooksOfOrganization(orgId),
          -1,
        ),
        ...this.summaryTx(orgId, endpoint, undefined),
        this.healths.deleteTx(keys.webhookHealth(orgId, endpoint.id)),
      ],
    );
  }

  /**
   * Writes the endpoint (first) with the other items, in one transaction
   * when there are any; false when the endpoint's version condition failed.
   */
  private async writeOnVersion(
    write: TransactItem,
    others: TransactItem[],
  ): Promise<boolean> {
    try {
      await transactWrite(this.table, [write, ...others]);
      return true;
    } catch (error) {
      if (failedConditions(error)?.includes(0)) return false;
      throw error;
    }
  }
}
