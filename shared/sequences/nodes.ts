/**
 * Application logic of the nodes of a draft: a wait or an email added at
 * the end (the starter content, or a template's), edited one family of
 * fields at a time (an email's content must render), and removed; the
 * version's nodes and content bytes stay within their limits.
 */
import {
  NotFoundError,
  RuleViolationError,
  ValidationError,
} from '../errors.ts';
import { checkRenders } from '../rendering/check-renders.ts';
import {
  DEFAULT_NODE_CONTENT,
  MAX_NODES_PER_VERSION,
  MAX_VERSION_CONTENT_BYTES,
  type SequenceNode,
  type SequenceVersion,
} from './model.ts';
import type { SequencesDeps as Deps, VersionWithNodes } from './ports.ts';
import { requireDraft, requireSequence } from './reads.ts';
import {
  type CreateNodeInput,
  NODE_FAMILIES,
  type UpdateNodeInput,
} from './sequence.schema.ts';
import { type Deleted, type NodeView, nodeView } from './views.ts';

const bytesOf = (node: SequenceNode) =>
  node.type === 'send_email' ? Buffer.byteLength(node.content) : 0;

const withinBudget = (version: SequenceVersion, bytes: number) => {
  if (bytes > MAX_VERSION_CONTENT_BYTES) {
    throw new ValidationError(
      `The nodes of version ${version.number} would hold ${bytes} bytes of content, above ${MAX_VERSION_CONTENT_BYTES}`,
      [
        {
          field: 'content',
          message: `the version's emails may hold ${MAX_VERSION_CONTENT_BYTES} bytes together`,
        },
      ],
    );
  }
  return bytes;
};

/**
 * Adds a node at the end of a draft: a wait, or an email with the starter
 * content (or a template's content and default subject).
 */
export const addNode = async (
  deps: Pick<Deps, 'sequences' | 'templates' | 'ids' | 'clock'>,
  orgId: string,
  sequenceId: string,
  versionId: string,
  input: CreateNodeInput,
): Promise<NodeView> => {
  await requireSequence(deps, orgId, sequenceId);
  const { version, nodes } = await requireDraft(
    deps,
    orgId,
    sequenceId,
    versionId,
  );
  const id = deps.ids.createdId();
  // An earlier run of this request (its Idempotency-Key) added it: that one.
  const earlier = deps.ids.rerun
    ? nodes.findIndex((node) => node.id === id)
    : -1;
  const added = nodes[earlier];
  if (added) return nodeView(added, earlier);
  if (version.nodeCount >= MAX_NODES_PER_VERSION) {
    throw new RuleViolationError(
      'sequence.nodeLimit',
      `Version ${version.number} has ${version.nodeCount} nodes, the most one version may hold (${MAX_NODES_PER_VERSION})`,
    );
  }
  const now = deps.clock.now().toISOString();
  const base = {
    id,
    versionId,
    order: version.nodeSeq + 1,
    createdAt: now,
    updatedAt: now,
  };
  let node: SequenceNode;
  if (input.type === 'wait') {
    node = { ...base, type: 'wait', waitHours: input.waitHours };
  } else {
    const template = input.templateId
      ? await deps.templates.get(orgId, input.templateId)
      : undefined;
    if (input.templateId && !template) {
      throw new NotFoundError(
        'template.notFound',
        `No template ${input.templateId}`,
      );
    }
    node = {
      ...base,
      type: 'send_email',
      subject: template?.defaultSubject || null,
      content: template?.content ?? DEFAULT_NODE_CONTENT,
      sendTimeMinutes: null,
      templateId: template?.id ?? null,
    };
  }
  const after: SequenceVersion = {
    ...version,
    nodeSeq: version.nodeSeq + 1,
    nodeCount: version.nodeCount + 1,
    contentBytes: withinBudget(version, version.contentBytes + bytesOf(node)),
    updatedAt: now,
  };
  await deps.sequences.addNode(orgId, version, after, node);
  return nodeView(node, nodes.length);
};

/** The families an edit touches, by the fields it sends. */
const familiesOf = (input: UpdateNodeInput) =>
  Object.entries(NODE_FAMILIES).filter(([, fields]) =>
    fields.some((field) => input[field] !== undefined),
  );

const findNode = (found: VersionWithNodes, nodeId: string) => {
  const index = found.nodes.findIndex((node) => node.id === nodeId);
  if (index < 0) {
    throw new NotFoundError(
      'sequenceNode.notFound',
      `No node ${nodeId} in version ${found.version.number}`,
    );
  }
  return { node: found.nodes[index] as SequenceNode, index };
};

/**
 * Edits one node of a draft, one family of fields per call: {subject,
 * content} or {sendTimeMinutes} on an email, {waitHours} on a wait. Two
 * families, or a family of the other type, are a 400 naming the fields.
 */
export const updateNode = async (
  deps: Pick<Deps, 'sequences' | 'clock'>,
  orgId: string,
  sequenceId: string,
  versionId: string,
  nodeId: string,
  input: UpdateNodeInput,
): Promise<NodeView> => {
  await requireSequence(deps, orgId, sequenceId);
  const found = await requireDraft(deps, orgId, sequenceId, versionId);
  const { node, index } = findNode(found, nodeId);
  const families = familiesOf(input);
  const sent = families.flatMap(([, fields]) =>
    fields.filter((field) => input[field] !== undefined),
  );
  if (families.length > 1) {
    throw new ValidationError(
      `One family of fields per call: ${families.map(([, fields]) => `{${fields.join(', ')}}`).join(' and ')} were sent together`,
      sent.map((field) => ({
        field,
        message: 'belongs to another family than the other fields sent',
      })),
    );
  }
  const family = families[0]?.[0];
  const fitsType = node.type === 'wait' ? family === 'wait' : family !== 'wait';
  if (!fitsType) {
    throw new ValidationError(
      `A ${node.type} node has no ${sent.join(', ')}`,
      sent.map((field) => ({
        field,
        message: `is not a field of a ${node.type} node`,
      })),
    );
  }
  const now = deps.clock.now().toISOString();
  let after: SequenceNode;
  if (node.type === 'wait') {
    after = { ...node, waitHours: input.waitHours ?? node.waitHours };
  } else {
    await checkRenders({ subject: input.subject, content: input.content });
    after = {
      ...node,
      ...(input.subject !== undefined ? { subject: input.subject } : {}),
      ...(input.content !== undefined ? { content: input.content } : {}),
      ...(input.sendTimeMinutes !== undefined
        ? { sendTimeMinutes: input.sendTimeMinutes }
        : {}),
    };
  }
  after = { ...after, updatedAt: now };
  const { version } = found;
  const versionAfter: SequenceVersion = {
    ...version,
    contentBytes: withinBudget(
      version,
      version.contentBytes - bytesOf(node) + bytesOf(after),
    ),
    updatedAt: now,
  };
  await deps.sequences.updateNode(orgId, version, versionAfter, after);
  return nodeView(after, index);
};

/** Removes one node of a draft. */
export const deleteNode = async (
  deps: Pick<Deps, 'sequences' | 'clock'>,
  orgId: string,
  sequenceId: string,
  versionId: string,
  nodeId: string,
): Promise<Deleted> => {
  await requireSequence(deps, orgId, sequenceId);
  const found = await requireDraft(deps, orgId, sequenceId, versionId);
  const { node } = findNode(found, nodeId);
  const { version } = found;
  const after: SequenceVersion = {
    ...version,
    nodeCount: version.nodeCount - 1,
    contentBytes: Math.max(0, version.contentBytes - bytesOf(node)),
    updatedAt: deps.clock.now().toISOString(),
  };
  await deps.sequences.deleteNode(orgId, version, after, node);
  return { id: nodeId };
};
