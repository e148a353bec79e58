/**
 * The world of the journey tests, on the embedded engine: an organization
 * with a list on deps whose scheduler, queues (steps, dispatch, send) and
 * mailer are captured, on a clock the test moves; and the sequences and
 * contacts they need. Enrolment comes from the table's stream, caught up
 * by `events.settle()`; steps run through the `steps` consumer's handler.
 */
import {
  type StepsConsumerDeps,
  stepsConsumer,
} from '../../functions/steps/consumer.ts';
import { addContact } from '../../shared/audience/contacts.ts';
import {
  type BatchMessage,
  deliverBatch,
} from '../../shared/campaigns/deliver.ts';
import {
  type DispatchMessage,
  dispatchCampaign,
} from '../../shared/campaigns/dispatch.ts';
import type { Deps } from '../../shared/deps.ts';
import type {
  Mailer,
  OutgoingMessage,
  QueueSender,
} from '../../shared/ports.ts';
import type { ScheduledMessage } from '../../shared/scheduling/ports.ts';
import {
  createSequence,
  updateSequence,
} from '../../shared/sequences/heads.ts';
import { addNode, updateNode } from '../../shared/sequences/nodes.ts';
import { publishVersion } from '../../shared/sequences/publish.ts';
import { orgWithList, uniqueEmail } from './audience.ts';
import { createTestDeps } from './dynamo.ts';

/** A mailer that records what it accepts and acts on cue per call. */
export const scriptedMailer = () => {
  const accepted: OutgoingMessage[] = [];
  let script: (call: number) => 'ok' | Error = () => 'ok';
  let calls = 0;
  const mailer: Mailer = {
    send: async (message) => {
      const cue = script(++calls);
      if (cue instanceof Error) throw cue;
      accepted.push(message);
      return { messageId: `msg-${calls}` };
    },
  };
  return {
    mailer,
    accepted,
    onCall: (next: (call: number) => 'ok' | Error) => {
      script = next;
    },
  };
};

/** An organization, its list, a sequence, and its captured edges. */
export const journeyWorld = async () => {
  let now = Date.now();
  const clock = { now: () => new Date(now) };
  const schedules = new Map<string, ScheduledMessage>();
  const cancelled: string[] = [];
  const queued: unknown[] = [];
  const dispatched: DispatchMessage[] = [];
  const batches: BatchMessage[] = [];
  let failSchedules = 0;
  const mail = scriptedMailer();
  const { deps, events, tableName } = await createTestDeps({
    clock,
    mailer: mail.mailer,
    scheduler: {
      schedule: async (s) => {
        if (failSchedules-- > 0) throw new Error('the scheduler is down');
        schedules.set(s.name, s);
      },
      cancel: async (name) => {
        cancelled.push(name);
        schedules.delete(name);
      },
    },
    queues: {
      steps: { send: async (m) => void queued.push(m) },
      dispatch: { send: async (m) => void dispatched.push(m as never) },
      send: { send: async (m) => void batches.push(m as never) },
    },
  });
  const { orgId, listId } = await orgWithList(deps);
  const consumerDeps = deps as unknown as StepsConsumerDeps;
  const delivery = { messageId: 'm', receiveCount: 1 };
  const handle = (message: unknown) =>
    stepsConsumer.handle(consumerDeps, message as never, delivery);

  return {
    deps,
    tableName,
    orgId,
    listId,
    mail,
    schedules,
    cancelled,
    queued,
    dispatched,
    events,
    handle,
    advance: (ms: number) => {
      now += ms;
    },
    now: () => new Date(now),
    failNextSchedules: (n: number) => {
      failSchedules = n;
    },
    /**
     * Runs what is due: the queued messages, then each schedule whose
     * instant has come (removed, as a one-shot schedule is once fired).
     */
    run: async () => {
      for (let round = 0; round < 20; round++) {
        const due = [...schedules.values()].filter(
          (s) => s.at.getTime() <= now,
        );
        for (const s of due) schedules.delete(s.name);
        const messages = [...queued.splice(0), ...due.map((s) => s.message)];
        if (messages.length === 0) return;
        for (const message of messages) await handle(message);
      }
      throw new Error('journeys did not settle');
    },
    /** Runs the dispatcher and the senders until their queues are empty. */
    drain: async () => {
      const pipeline = deps as Deps & {
        queues: { dispatch: QueueSender; send: QueueSender };
      };
      for (;;) {
        const message = dispatched.shift();
        if (message) {
          await dispatchCampaign(pipeline, message);
          continue;
        }
        const batch = batches.shift();
        if (!batch) return;
        await deliverBatch(pipeline, batch);
      }
    },
  };
};

export type World = Awaited<ReturnType<typeof journeyWorld>>;

/**
 * An active sequence on the list (or a tag): steps of `steps` (a wait of
 * `hours` before each step but the first), subjects "Step 1", "Step 2"…
 */
export const activeSequence = async (
  w: Pick<World, 'deps' | 'orgId' | 'listId'>,
  options: {
    steps?: number;
    hours?: number;
    tagId?: string;
    topicId?: string;
    sendTimeMinutes?: number;
  } = {},
) => {
  const { deps, orgId } = w;
  const created = await createSequence(deps, orgId, {
    name: `Welcome ${Math.random()}`,
    triggerType: options.tagId ? 'tag_added' : 'list_joined',
    triggerTargetId: options.tagId ?? w.listId,
  });
  if (options.topicId) {
    await updateSequence(deps, orgId, created.id, { topicId: options.topicId });
  }
  const head = await deps.sequences.get(orgId, created.id);
  const versionId = head?.draftVersionId;
  if (!versionId) throw new Error('no draft');
  await fillDraft(deps, orgId, created.id, versionId, 'Step', options);
  await publishVersion(deps, orgId, created.id, versionId);
  await updateSequence(deps, orgId, created.id, { status: 'active' });
  return { sequenceId: created.id, versionId };
};

/** Adds the steps (and waits between them) to a draft. */
export const fillDraft = async (
  deps: Deps,
  orgId: string,
  sequenceId: string,
  versionId: string,
  prefix: string,
  options: { steps?: number; hours?: number; sendTimeMinutes?: number },
) => {
  for (let step = 1; step <= (options.steps ?? 3); step++) {
    if (step > 1) {
      await addNode(deps, orgId, sequenceId, versionId, {
        type: 'wait',
        waitHours: options.hours ?? 24,
      });
    }
    const node = await addNode(deps, orgId, sequenceId, versionId, {
      type: 'send_email',
    });
    await updateNode(deps, orgId, sequenceId, versionId, node.id, {
      subject: `${prefix} ${step}`,
    });
    if (options.sendTimeMinutes !== undefined) {
      await updateNode(deps, orgId, sequenceId, versionId, node.id, {
        sendTimeMinutes: options.sendTimeMinutes,
      });
    }
  }
};

/** Adds a subscribed contact and lets the facts enrol it. */
export const join = async (w: World, name = 'reader') => {
  const { contact } = await addContact(w.deps, w.orgId, w.listId, {
    email: uniqueEmail(name),
    doubleOptIn: false,
  });
  await w.events.settle();
  return contact;
};

/** A contact's journey through a sequence, as stored. */
export const journeyOf = (w: World, sequenceId: string, contactId: string) =>
  w.deps.enrolments.get(w.orgId, sequenceId, contactId);

export const subjects = (w: World) => w.mail.accepted.map((m) => m.subject);
