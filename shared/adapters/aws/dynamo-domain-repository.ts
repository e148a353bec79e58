/**
 * Driven adapter: sending domains. Each organization's declaration is an
 * item of its partition (last known statuses, proof of ownership); one claim
 * item per domain name records which organizations declared it and which one
 * proved it. A proof that transfers the domain updates the new owner's
 * declaration, the claim and the previous owner's declaration together.
 */
import * as v from 'valibot';
import { type ItemOf, itemSchema, parseItem } from '../../db/items.ts';
import { keys } from '../../db/keys.ts';
import { ConflictError, NotFoundError } from '../../errors.ts';
import { retryOnConflict } from '../../retry.ts';
import type { SendingDomain } from '../../sending/model.ts';
import type { DomainRepository } from '../../sending/ports.ts';
import type { DkimStatus, MailFromStatus } from '../../sending/provider.ts';
import { entity } from './dynamo-entity.ts';
import {
  type DynamoTable,
  failedConditions,
  transactWrite,
} from './dynamo-table.ts';

/** The DKIM and MAIL FROM statuses, as the provider reports them. */
const STATUSES = [
  'PENDING',
  'SUCCESS',
  'FAILED',
] as const satisfies readonly DkimStatus[] & readonly MailFromStatus[];

const DomainItem = itemSchema('Domain', {
  id: v.string(),
  domain: v.string(),
  createdAt: v.string(),
  dkimStatus: v.picklist(STATUSES),
  mailFromDomain: v.optional(v.nullable(v.string()), null),
  mailFromStatus: v.optional(v.nullable(v.picklist(STATUSES)), null),
  ownershipProved: v.optional(v.boolean(), false),
  declaredAfterAnother: v.optional(v.boolean(), false),
  lastCheckedAt: v.optional(v.nullable(v.string()), null),
  // When ownership was proved or lost to a transfer: kept, not read.
  ownershipProvedAt: v.optional(v.string()),
  ownershipLostAt: v.optional(v.string()),
});

/** Who declared a domain name, who proved it, whether its identity was found. */
const DomainClaimItem = itemSchema('DomainClaim', {
  // DynamoDB stores no empty set: no attribute means nobody declares it.
  declaredBy: v.optional(v.set(v.string()), () => new Set<string>()),
  ownerOrgId: v.optional(v.string()),
  ownerDomainId: v.optional(v.string()),
  identityFound: v.optional(v.boolean(), false),
});

/** The declaration alone: the instants of the proof stay in the item. */
const withoutEvidence = ({
  ownershipProvedAt,
  ownershipLostAt,
  ...domain
}: ItemOf<typeof DomainItem>): SendingDomain => domain;

/** A domain item's declaration (also read with the address book). */
export const domainFromItem = (item: Record<string, unknown>): SendingDomain =>
  withoutEvidence(parseItem(DomainItem, item));

const alreadyDeclared = (domain: SendingDomain, cause?: unknown) =>
  new ConflictError(
    'domain.alreadyDeclared',
    `${domain.domain} is already declared by this organization`,
    { cause },
  );

const gone = (domainId: string) => (cause: unknown) =>
  new NotFoundError('domain.notFound', `No domain ${domainId}`, { cause });

/** Declarations, claims and proofs of sending domains. */
export class DynamoDomainRepository implements DomainRepository {
  private readonly domains;
  private readonly claims;

  constructor(private readonly table: DynamoTable) {
    this.domains = entity(table, DomainItem);
    this.claims = entity(table, DomainClaimItem);
  }

  async list(orgId: string): Promise<SendingDomain[]> {
    const found = await this.domains.all(keys.domainsOfOrganization(orgId), {
      consistent: true,
    });
    return found.map(withoutEvidence);
  }

  async get(
    orgId: string,
    domainId: string,
  ): Promise<SendingDomain | undefined> {
    const found = await this.domains.get(keys.domain(orgId, domainId), {
      consistent: true,
    });
    return found && withoutEvidence(found);
  }

  async declare(
    orgId: string,
    domain: SendingDomain,
    options: { foundIdentity?: boolean } = {},
  ): Promise<SendingDomain> {
    return retryOnConflict(async (retryable) => {
      // Who declared the name before: the transaction holds only if still so.
      const claim = await this.claim(domain.domain);
      if (claim.declaredBy.has(orgId)) throw alreadyDeclared(domain);
      const first = claim.declaredBy.size === 0;
      // The first declaration that found the identity marks it as found.
      const markFound = first && options.foundIdentity === true;
      const declared = {
        ...domain,
        declaredAfterAnother: !first || options.foundIdentity === true,
      };
      try {
        await transactWrite(this.table, [
          this.claims.updateTx(
            keys.domainClaim(domain.domain),
            {
              add: { declaredBy: new Set([orgId]) },
              set: { identityFound: markFound ? true : undefined },
            },
            {
              if: (w) =>
                first
                  ? w.missing('declaredBy')
                  : w.not(w.contains('declaredBy', orgId)),
            },
          ),
          this.domains.putTx(keys.domain(orgId, domain.id), declared, {
            if: (w) => w.missing(),
          }),
        ]);
        return declared;
      } catch (error) {
        // Another declaration came in meanwhile: read the claim again.
        if (failedConditions(error)?.includes(0)) {
          retryable(alreadyDeclared(domain, error));
        }
        throw error;
      }
    });
  }

  /** The organizations that declare a name (strongly consistent). */
  private async claim(name: string) {
    const key = keys.domainClaim(name);
    const found = await this.claims.get(key, { consistent: true });
    return found ?? this.claims.parse({}, key);
  }

  async saveState(orgId: string, domain: SendingDomain): Promise<void> {
    await this.domains.update(
      keys.domain(orgId, domain.id),
      {
        // Statuses only: the proof of ownership moves by its own transaction.
        set: {
          dkimStatus: domain.dkimStatus,
          mailFromDomain: domain.mailFromDomain,
          mailFromStatus: domain.mailFromStatus,
          lastCheckedAt: domain.lastCheckedAt,
        },
      },
      { if: (w) => w.exists(), otherwise: gone(domain.id) },
    );
  }

  async remove(
    orgId: string,
    domain: SendingDomain,
  ): Promise<{ stillDeclared: boolean; keepIdentity: boolean }> {
    const claim = await this.claim(domain.domain);
    const owned =
      claim.ownerOrgId === orgId && claim.ownerDomainId === domain.id;
    await transactWrite(this.table, [
      this.domains.deleteTx(keys.domain(orgId, domain.id), {
        if: (w) => w.exists(),
        otherwise: gone(domain.id),
      }),
      this.claims.updateTx(keys.domainClaim(domain.domain), {
        delete: { declaredBy: new Set([orgId]) },
        ...(owned ? { remove: ['ownerOrgId', 'ownerDomainId'] } : {}),
      }),
    ]);
    const stillDeclared = [...claim.declaredBy].some((id) => id !== orgId);
    return {
      stillDeclared,
      keepIdentity: stillDeclared || claim.identityFound,
    };
  }

  async owner(
    domain: string,
  ): Promise<{ orgId: string; domainId: string } | undefined> {
    const { ownerOrgId, ownerDomainId } = await this.claim(domain);
    return ownerOrgId !== undefined && ownerDomainId !== undefined
      ? { orgId: ownerOrgId, domainId: ownerDomainId }
      : undefined;
  }

  async proveOwnership(
    orgId: string,
    domain: SendingDomain,
    at: string,
    previous?: { orgId: string; domainId: string },
  ): Promise<void> {
    const changed = (cause: unknown) =>
      new ConflictError(
        'domain.ownershipChanged',
        `The ownership of ${domain.domain} changed meanwhile; verify again`,
        { cause },
      );
    await transactWrite(this.table, [
      this.domains.updateTx(
        keys.domain(orgId, domain.id),
        { set: { ownershipProved: true, ownershipProvedAt: at } },
        { if: (w) => w.exists(), otherwise: changed },
      ),
      this.claims.updateTx(
        keys.domainClaim(domain.domain),
        {
          // A proved domain's identity is its owner's: no longer "found".
          set: { ownerOrgId: orgId, ownerDomainId: domain.id },
          remove: ['identityFound'],
        },
        {
          // Nobody else took it since we read the previous owner.
          if: (w) =>
            previous
              ? w.and(
                  w.eq('ownerOrgId', previous.orgId),
                  w.eq('ownerDomainId', previous.domainId),
                )
              : w.missing('ownerOrgId'),
          otherwise: changed,
        },
      ),
      ...(previous && previous.domainId !== domain.id
        ? [
            this.domains.updateTx(
              keys.domain(previous.orgId, previous.domainId),
              { set: { ownershipProved: false, ownershipLostAt: at } },
              { if: (w) => w.exists(), otherwise: changed },
            ),
          ]
        : []),
    ]);
  }
}
