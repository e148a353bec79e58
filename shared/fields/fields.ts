/**
 * Application logic of custom fields: defining, reading, changing and
 * deleting the fields of an organization. Agnostic to how it is called and
 * where data is stored.
 */
import * as v from 'valibot';
import { ConflictError, NotFoundError, ValidationError } from '../errors.ts';
import type { Page, PageRequest } from '../ports.ts';
import { Timestamp, ViewId } from '../validation.ts';
import {
  type CreateFieldInput,
  FieldKey,
  type UpdateFieldInput,
  valueIssue,
} from './field.schema.ts';
import { FIELD_TYPES, type Field } from './model.ts';
import type { FieldsDeps as Deps } from './ports.ts';

/** A field as the API shows it. */
export const FieldView = v.pipe(
  v.object({
    id: ViewId,
    key: FieldKey,
    label: v.string(),
    type: v.pipe(
      v.picklist(FIELD_TYPES),
      v.description(
        'What its values are: `text` (up to 1,000 characters), `number`, `date` (`YYYY-MM-DD`), `boolean`, or `option` (one of `options`)',
      ),
    ),
    options: v.pipe(
      v.nullable(v.array(v.string())),
      v.description('The choices of an `option` field; null for other types'),
    ),
    defaultValue: v.pipe(
      v.nullable(v.union([v.string(), v.number(), v.boolean()])),
      v.description(
        'What a contact without a value shows in templates; null when none',
      ),
    ),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  }),
  v.title('Field'),
);
export type FieldView = v.InferOutput<typeof FieldView>;

/** The answer of DELETE /fields/{fieldId}. */
export const DeletedField = v.pipe(
  v.object({
    id: v.pipe(ViewId, v.description('The id of the field removed')),
    key: v.pipe(
      FieldKey,
      v.description(
        'Its key: retired, not free: contacts may still hold values under it, so no new field takes it',
      ),
    ),
  }),
  v.title('DeletedField'),
);
export type DeletedField = v.InferOutput<typeof DeletedField>;

const view = (field: Field): FieldView => ({
  id: field.id,
  key: field.key,
  label: field.label,
  type: field.type,
  options: field.options ?? null,
  defaultValue: field.defaultValue ?? null,
  createdAt: field.createdAt,
  updatedAt: field.updatedAt,
});

/** The stored field, or 404 for a missing one or another organization's. */
export const requireField = async (
  deps: Pick<Deps, 'fields'>,
  orgId: string,
  fieldId: string,
): Promise<Field> => {
  const field = await deps.fields.get(orgId, fieldId);
  if (!field) throw new NotFoundError('field.notFound', `No field ${fieldId}`);
  return field;
};

/** Options named twice (compared as stored: trimmed) are refused. */
const checkOptions = (key: string, options: readonly string[] = []): void => {
  const repeated = options.filter((o, i) => options.indexOf(o) !== i);
  if (repeated.length) {
    const message = `name ${[...new Set(repeated)].map((o) => `"${o}"`).join(', ')} more than once`;
    throw new ValidationError(
      `The options of ${key} ${message}`,
      [{ field: 'options', message }],
      { code: 'field.optionsRepeated' },
    );
  }
};

/** Defines a field; a key taken answers 409, past the limit 400. */
export const createField = async (
  deps: Pick<Deps, 'fields' | 'ids' | 'clock'>,
  orgId: string,
  input: CreateFieldInput,
): Promise<FieldView> => {
  const id = deps.ids.createdId();
  // An earlier run of this request (its Idempotency-Key) made it: that one.
  const earlier = deps.ids.rerun ? await deps.fields.get(orgId, id) : undefined;
  if (earlier) return view(earlier);
  const options = input.type === 'option' ? input.options : undefined;
  checkOptions(input.key, options);
  if (
    input.type === 'option' &&
    input.defaultValue !== undefined &&
    !input.options.includes(input.defaultValue)
  ) {
    const message = `must be one of the options: ${input.options.join(', ')}`;
    throw new ValidationError(
      `The default of ${input.key} ${message}`,
      [{ field: 'defaultValue', message }],
      { code: 'field.defaultInvalid' },
    );
  }
  const now = deps.clock.now().toISOString();
  const field: Field = {
    id,
    key: input.key,
    label: input.label,
    type: input.type,
    ...(options ? { options } : {}),
    ...(input.defaultValue === undefined
      ? {}
      : { defaultValue: input.defaultValue }),
    createdAt: now,
    updatedAt: now,
  };
  await deps.fields.create(orgId, field);
  return view(field);
};

/** One field. */
export const getField = async (
  deps: Pick<Deps, 'fields'>,
  orgId: string,
  fieldId: string,
): Promise<FieldView> => view(await requireField(deps, orgId, fieldId));

/** The fields of the organization, newest first. */
export const listFields = async (
  deps: Pick<Deps, 'fields'>,
  orgId: string,
  request: PageRequest,
): Promise<Page<FieldView>> => {
  const page = await deps.fields.page(orgId, request);
  return { items: page.items.map(view), total: page.total };
};

/**
 * Changes a field's label, adds options, sets or clears its default. An
 * option is never removed or renamed (contacts hold it): 400
 * `field.optionsKept`. A default must fit the field as it will be.
 */
export const updateField = async (
  deps: Pick<Deps, 'fields' | 'clock'>,
  orgId: string,
  fieldId: string,
  input: UpdateFieldInput,
): Promise<FieldView> => {
  const before = await requireField(deps, orgId, fieldId);
  if (input.options !== undefined) {
    checkOptions(before.key, input.options);
    if (before.type !== 'option') {
      const message = `only an option field has options; ${before.key} is of type ${before.type}`;
      throw new ValidationError(
        `The field ${before.key}: ${message}`,
        [{ field: 'options', message }],
        { code: 'field.optionsKept' },
      );
    }
    const dropped = (before.options ?? []).filter(
      (option) => !input.options?.includes(option),
    );
    if (dropped.length) {
      const message = `may be added, never removed or renamed (contacts hold them): keep ${dropped.map((o) => `"${o}"`).join(', ')}`;
      throw new ValidationError(
        `Options of ${before.key} ${message}`,
        [{ field: 'options', message }],
        { code: 'field.optionsKept' },
      );
    }
  }
  const options = input.options ?? before.options;
  const defaultValue =
    input.defaultValue === undefined ? before.defaultValue : input.defaultValue;
  if (defaultValue !== undefined && defaultValue !== null) {
    const issue = valueIssue(before.type, defaultValue, options);
    if (issue) {
      throw new ValidationError(
        `The default of ${before.key} ${issue}`,
        [{ field: 'defaultValue', message: issue }],
        { code: 'field.defaultInvalid' },
      );
    }
  }
  const { defaultValue: _, ...rest } = before;
  const after: Field = {
    ...rest,
    ...(input.label === undefined ? {} : { label: input.label }),
    ...(options ? { options } : {}),
    ...(defaultValue === undefined || defaultValue === null
      ? {}
      : { defaultValue }),
    updatedAt: deps.clock.now().toISOString(),
  };
  await deps.fields.update(orgId, before, after);
  return view(after);
};

/** 409 `field.inUse` naming each segment whose conditions name the field. */
const inUse = (field: Field, segments: { id: string; name: string }[]) =>
  new ConflictError(
    'field.inUse',
    `The field ${field.key} is named by the conditions of these segments: ${segments
      .map((s) => `"${s.name}" (${s.id})`)
      .join(
        ', ',
      )}. Take the conditions on fields.${field.key} out of them, or delete them, then delete the field.`,
  );

/**
 * Deletes a field; its key stays retired (values may remain under it). A
 * field a segment's conditions name is kept: 409 `field.inUse` naming each
 * segment, so that no segment silently widens its audience.
 */
export const deleteField = async (
  deps: Pick<Deps, 'fields'>,
  orgId: string,
  fieldId: string,
): Promise<DeletedField> => {
  // Segments may take or let go of the field meanwhile: the delete is
  // conditional, and a refusal is explained from a fresh read.
  for (let attempt = 0; attempt < 3; attempt++) {
    const field = await requireField(deps, orgId, fieldId);
    if (await deps.fields.delete(orgId, field)) {
      return { id: field.id, key: field.key };
    }
    const segments = await deps.fields.segmentsUsing(orgId, field);
    if (segments.length) throw inUse(field, segments);
  }
  throw new ConflictError(
    'write.contended',
    `Field ${fieldId} kept changing while it was deleted; retry`,
  );
};
