/**
 * `Deps`: everything the domain and the pipeline need, built once per
 * container by `shared/runtime/*`. A type-only aggregate of each area's
 * ports: the edge (`shared/http`, `functions/`), the composition roots and
 * the tests use it; no domain area imports it (each takes its own
 * `<Area>Deps`, narrowed with `Pick`).
 */
import type { AccessDeps, GatewayKeyRegistry } from './access/ports.ts';
import type { ActivityDeps } from './activity/ports.ts';
import type { AudienceDeps } from './audience/ports.ts';
import type { CampaignsDeps } from './campaigns/ports.ts';
import type { CampaignStatsDeps } from './campaigns/stats-ports.ts';
import type { DeliveryDeps } from './delivery/ports.ts';
import type { FieldsDeps } from './fields/ports.ts';
import type { IdempotencyDeps } from './idempotency/ports.ts';
import type { OrganizationsDeps } from './organizations/ports.ts';
import type { CoreDeps, QueueSenders } from './ports.ts';
import type { ErasuresDeps } from './privacy/erasure-ports.ts';
import type { ExportDeps } from './privacy/export-ports.ts';
import type { ReputationSettings } from './reputation/ports.ts';
import type { SchedulingDeps } from './scheduling/ports.ts';
import type { SegmentsDeps } from './segments/ports.ts';
import type { SendingDeps } from './sending/ports.ts';
import type { SequencesDeps } from './sequences/ports.ts';
import type { SettingsDeps } from './settings/ports.ts';
import type {
  SignupFormSettings,
  SignupLimits,
  SignupPageRepository,
} from './signup/ports.ts';
import type { MxResolver, StatisticsDeps } from './statistics/ports.ts';
import type { TemplatesDeps } from './templates/ports.ts';
import type { TopicsDeps } from './topics/ports.ts';
import type {
  WebhookCallsDeps,
  WebhookStoresDeps,
} from './webhooks/delivery-ports.ts';
import type { WebhookEmitDeps } from './webhooks/ports.ts';

/** Everything the domain and the pipeline need, built once per container. */
export interface Deps
  extends CoreDeps,
    OrganizationsDeps,
    SendingDeps,
    SettingsDeps,
    TopicsDeps,
    FieldsDeps,
    ErasuresDeps,
    SegmentsDeps,
    AudienceDeps,
    ActivityDeps,
    TemplatesDeps,
    AccessDeps,
    DeliveryDeps,
    CampaignStatsDeps,
    StatisticsDeps,
    SchedulingDeps,
    WebhookStoresDeps,
    WebhookCallsDeps,
    WebhookEmitDeps,
    Pick<
      CampaignsDeps,
      'campaigns' | 'sends' | 'audience' | 'pacer' | 'sendWindows'
    >,
    Pick<SequencesDeps, 'sequences' | 'enrolments'>,
    Pick<ExportDeps, 'exportReader'>,
    Pick<IdempotencyDeps, 'idempotency'>,
    Pick<ReputationSettings, 'reputation' | 'reputationThresholds'> {
  signupPages: SignupPageRepository;
  signupLimits: SignupLimits;
  /** How the public sign-up form defends itself (operator settings). */
  signupForms: SignupFormSettings;
  /** MX lookups: the mailbox provider of an address's domain. */
  mx: MxResolver;
  /** The edge's registry of API keys (the key routes register and disable). */
  gatewayKeys: GatewayKeyRegistry;
  /** The least lead time of a schedule (`SCHEDULE_MIN_LEAD_SECONDS`). */
  scheduleMinLeadSeconds: number;
  /**
   * The longest wait sent as a delayed queue message; a longer one is a
   * schedule (900 s, SQS's limit, on AWS; shorter on the local stack, so
   * that its movable clock moves the waits).
   */
  queueDelayMaxSeconds: number;
  /** The consumer queues a function may send to, by group name. */
  queues: QueueSenders<string>;
  // Topics see contacts through a narrower port; the audience's store is one.
  contacts: AudienceDeps['contacts'];
  // The audience only looks suppressions up; delivery's store keeps them.
  delivery: DeliveryDeps['delivery'];
}
