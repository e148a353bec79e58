/**
 * Driven adapter: organizations in the single DynamoDB table.
 */
import * as v from 'valibot';
import { ifMissing, type Update } from '../../db/expressions.ts';
import { itemSchema, parseItem } from '../../db/items.ts';
import { keys } from '../../db/keys.ts';
import { ConflictError, NotFoundError } from '../../errors.ts';
import type {
  IsolationState,
  Organization,
} from '../../organizations/model.ts';
import type { OrganizationRepository } from '../../organizations/ports.ts';
import { GUARDRAIL_CAUSES, type Guardrail } from '../../reputation/model.ts';
import { entity } from './dynamo-entity.ts';
import {
  type DynamoTable,
  isConditionFailure,
  transactWrite,
} from './dynamo-table.ts';
import { SuppressionsRekeyedItem } from './suppressions-rekeyed.ts';

/** The reservation of an organization's slug. */
const OrganizationSlugItem = itemSchema('OrganizationSlug', {
  orgId: v.string(),
});

const toItem = (org: Organization) => ({
  id: org.id,
  name: org.name,
  slug: org.slug,
  sendingAllowed: org.sendingAllowed,
  createdAt: org.createdAt,
  ...(org.sendQuota24h !== undefined ? { sendQuota24h: org.sendQuota24h } : {}),
});

const IsolationItem = v.object({
  provisioning: v.picklist(['none', 'provisioned', 'incomplete']),
  sendingStatus: v.picklist(['ENABLED', 'DISABLED']),
  checkedAt: v.string(),
}) satisfies v.GenericSchema<unknown, IsolationState>;

const Figure = v.pipe(v.number(), v.minValue(0));

/** A tripped guardrail: its cause, instant and the window's figures. */
const GuardrailItem = v.object({
  cause: v.picklist(GUARDRAIL_CAUSES),
  at: v.string(),
  threshold: Figure,
  window: v.object({
    sends: Figure,
    hardBounces: Figure,
    complaints: Figure,
    hours: Figure,
    bounceRate: Figure,
    complaintRate: Figure,
  }),
}) satisfies v.GenericSchema<unknown, Guardrail>;

const OrganizationItem = itemSchema('Organization', {
  id: v.string(),
  name: v.string(),
  slug: v.string(),
  sendingAllowed: v.boolean(),
  createdAt: v.string(),
  postalAddress: v.optional(v.string()),
  isolation: v.optional(IsolationItem),
  sendQuota24h: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1))),
  timezone: v.optional(v.string()),
  sequenceCap: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0))),
  guardrail: v.optional(GuardrailItem),
});

/** The organization's domain-verification token, written once. */
const ChallengeTokenItem = itemSchema('Organization', {
  challengeToken: v.string(),
});

/** The token as read before it may be written: absent until then. */
const ReadChallengeTokenItem = itemSchema('Organization', {
  challengeToken: v.optional(v.string()),
});

type OrganizationAttributes = v.InferInput<typeof OrganizationItem.schema>;

const notFound = (orgId: string) => (cause: unknown) =>
  new NotFoundError('organization.notFound', `No organization ${orgId}`, {
    cause,
  });

/** An organization item's organization (also read beside its settings). */
export const organizationFromItem = (
  item: Record<string, unknown>,
): Organization => parseItem(OrganizationItem, item);

/** How many organizations' challenge tokens a container keeps in memory. */
const MEMORIZED_TOKENS = 10_000;

/** Organizations, with their slugs reserved application-wide. */
export class DynamoOrganizationRepository implements OrganizationRepository {
  /** Challenge tokens already read, by organization (they never change). */
  private readonly challengeTokens = new Map<string, string>();

  private readonly organizations;
  private readonly slugs;
  private readonly tokens;
  private readonly rekeyed;

  constructor(private readonly table: DynamoTable) {
    this.organizations = entity(table, OrganizationItem);
    this.slugs = entity(table, OrganizationSlugItem);
    this.tokens = entity(table, ChallengeTokenItem);
    this.rekeyed = entity(table, SuppressionsRekeyedItem);
  }

  /**
   * The slug's reservation, the organization, and the marker saying its
   * suppressions are keyed by address key (a new organization has none
   * stored the old way), in one transaction.
   */
  async create(org: Organization): Promise<void> {
    await transactWrite(this.table, [
      this.slugs.putTx(
        keys.organizationSlug(org.slug),
        { orgId: org.id },
        {
          if: (w) => w.missing(),
          otherwise: (cause) =>
            new ConflictError(
              'organization.slugTaken',
              `The slug ${org.slug} is taken`,
              { cause },
            ),
        },
      ),
      this.organizations.putTx(keys.organization(org.id), toItem(org), {
        if: (w) => w.missing(),
      }),
      this.rekeyed.putTx(keys.suppressionsRekeyed(org.id), {
        at: org.createdAt,
      }),
    ]);
  }

  get(orgId: string): Promise<Organization | undefined> {
    return this.organizations.get(keys.organization(orgId));
  }

  async setSendingAllowed(orgId: string, allowed: boolean): Promise<void> {
    await this.update(orgId, { set: { sendingAllowed: allowed } });
  }

  async setPostalAddress(
    orgId: string,
    postalAddress: string | null,
  ): Promise<void> {
    await this.update(
      orgId,
      postalAddress === null
        ? { remove: ['postalAddress'] }
        : { set: { postalAddress } },
    );
  }

  async setTimezone(orgId: string, timezone: string | null): Promise<void> {
    await this.update(
      orgId,
      timezone === null ? { remove: ['timezone'] } : { set: { timezone } },
    );
  }

  async challengeToken(orgId: string, candidate: string): Promise<string> {
    // Written once and never changed: a container reads it once.
    const known = this.challengeTokens.get(orgId);
    if (known !== undefined) return known;
    const token = await this.readOrCreateChallengeToken(orgId, candidate);
    if (this.challengeTokens.size >= MEMORIZED_TOKENS) {
      this.challengeTokens.clear();
    }
    this.challengeTokens.set(orgId, token);
    return token;
  }

  private async readOrCreateChallengeToken(
    orgId: string,
    candidate: string,
  ): Promise<string> {
    // A read first: the token is written once, and reads must not write.
    const key = keys.organization(orgId);
    const found = await this.tokens.project(
      key,
      ['challengeToken'],
      ReadChallengeTokenItem,
    );
    if (found?.challengeToken !== undefined) return found.challengeToken;
    const written = await this.tokens.update(
      key,
      { set: { challengeToken: ifMissing(candidate) } },
      { if: (w) => w.exists(), returning: 'new' },
    );
    return written.challengeToken;
  }

  async saveIsolation(orgId: string, isolation: IsolationState): Promise<void> {
    await this.update(orgId, { set: { isolation } });
  }

  async setSequenceCap(orgId: string, cap: number): Promise<void> {
    await this.update(orgId, { set: { sequenceCap: cap } });
  }

  async setSendQuota(orgId: string, max24h: number): Promise<void> {
    await this.update(orgId, { set: { sendQuota24h: max24h } });
  }

  async setGuardrail(orgId: string, guardrail: Guardrail): Promise<boolean> {
    try {
      await this.organizations.update(
        keys.organization(orgId),
        { set: { guardrail } },
        { if: (w) => w.and(w.exists(), w.missing('guardrail')) },
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) {
        if (!(await this.get(orgId))) throw notFound(orgId)(error);
        return false;
      }
      throw error;
    }
  }

  async clearGuardrail(orgId: string): Promise<Guardrail | undefined> {
    const org = await this.organizations.get(keys.organization(orgId), {
      consistent: true,
    });
    if (!org) throw notFound(orgId)(undefined);
    if (!org.guardrail) return undefined;
    await this.update(orgId, { remove: ['guardrail'] });
    return org.guardrail;
  }

  private async update(orgId: string, update: Update<OrganizationAttributes>) {
    await this.organizations.update(keys.organization(orgId), update, {
      if: (w) => w.exists(),
      otherwise: notFound(orgId),
    });
  }
}
