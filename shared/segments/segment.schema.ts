/**
 * Schemas of the segment endpoints, and of a segment's conditions: one
 * schema per field, so a bad condition is refused naming its path
 * (`conditions.1.operator`, `conditions.1.value`). A condition on a custom
 * field (`fields.<key>`) is checked here for its shape only: which
 * operators and values fit depends on the field's type, checked against
 * the organization's fields by the domain (`field-conditions.ts`).
 */
import * as v from 'valibot';
import { CONTACT_STATUSES } from '../audience/model.ts';
import { hasSomeField, inJsonSchema } from '../schema-notes.ts';
import {
  Id,
  InstantWithOffsetAsUtc,
  lineText,
  requiredName,
} from '../validation.ts';
import {
  FIELD_OPERATORS,
  MAX_SEGMENT_CONDITIONS,
  PRESENCE_OPERATORS,
  SEGMENT_FIELDS,
  SEGMENT_MATCHES,
  SEGMENT_OPERATORS,
  type SegmentCondition,
  type SegmentField,
} from './model.ts';

const operatorsOf = <F extends SegmentField>(field: F) =>
  v.picklist(
    SEGMENT_OPERATORS[field],
    `must be one of ${SEGMENT_OPERATORS[field].join(', ')} for the field ${field}`,
  );

/** The operators of a date field that take an instant. */
const DATE_COMPARISONS = ['before', 'after'] as const;
/** The operators of a date field that take no value. */
const DATE_PRESENCE = ['exists', 'notExists'] as const;

const TagValue = v.pipe(
  v.string('must be the id of a tag of the organization'),
  v.uuid('must be the id of a tag of the organization (a UUID)'),
);

const StatusValue = v.picklist(
  CONTACT_STATUSES,
  `must be one of ${CONTACT_STATUSES.join(', ')}`,
);

const DOMAIN =
  /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/;

/** A domain name, compared case-insensitively: stored lower-cased. */
const DomainValue = v.pipe(
  v.string('must be a domain name such as example.com'),
  v.trim(),
  v.toLowerCase(),
  v.regex(DOMAIN, 'must be a domain name such as example.com (without @)'),
);

/** A text to look for, compared case-insensitively: stored lower-cased. */
const TextValue = v.pipe(
  lineText(400),
  v.trim(),
  v.minLength(1, 'must not be empty'),
  v.maxLength(100, 'must be at most 100 characters'),
  v.toLowerCase(),
);

/** An instant with an explicit offset, stored in UTC. */
const InstantValue = InstantWithOffsetAsUtc;

/**
 * The presence check in JSON Schema: `value` required with the operators
 * that compare, refused with those that test presence.
 */
const presenceRule = (
  comparisons: readonly string[],
  presences: readonly string[],
) =>
  presences.length === 0
    ? { required: ['value'] }
    : {
        dependentSchemas: {
          value: { properties: { operator: { enum: comparisons } } },
        },
        anyOf: [
          { properties: { operator: { enum: presences } } },
          { required: ['value'] },
        ],
      };

/** The presence check of a date field, in JSON Schema. */
const valueRule = (field: SegmentField) => {
  const operators = SEGMENT_OPERATORS[field] as readonly string[];
  return presenceRule(
    operators.filter((o) =>
      (DATE_COMPARISONS as readonly string[]).includes(o),
    ),
    operators.filter((o) => (DATE_PRESENCE as readonly string[]).includes(o)),
  );
};

/** A condition object: a key it does not take is refused, not dropped. */
const condition = <const E extends v.ObjectEntries>(entries: E) =>
  v.strictObject(
    entries,
    'must be a condition {field, operator, value}, with no other key',
  );

/**
 * The conditions of a date field: `before` and `after` take an instant;
 * `exists` and `notExists` (on a date a contact may lack) take no value.
 */
const dateConditions = <const F extends SegmentField>(field: F) =>
  v.pipe(
    condition({
      field: v.literal(field),
      operator: operatorsOf(field),
      value: v.optional(InstantValue),
    }),
    v.forward(
      v.partialCheck(
        [['operator'], ['value']],
        (c) =>
          (DATE_COMPARISONS as readonly string[]).includes(c.operator) ===
          (c.value !== undefined),
        `is required with ${DATE_COMPARISONS.join(' and ')}, and not taken by ${DATE_PRESENCE.join(' and ')}`,
      ),
      ['value'],
    ),
    inJsonSchema(valueRule(field)),
    // The check above ties the value to the operator: the model's type.
    v.transform((c) => c as SegmentCondition),
  );

/** The pattern of a condition's `field` naming a custom field. */
export const FIELD_REF = /^fields\.[a-z][a-z0-9_]{0,39}$/;

/** `fields.<key>`: a custom field of the organization, by its key. */
const FieldRefBody = v.pipe(
  v.string(),
  v.regex(
    FIELD_REF,
    'must be fields.<key>, the key of a field of the organization',
  ),
);

/** A value a custom field's condition compares with. */
const FieldConditionValue = v.union(
  [v.string(), v.number(), v.boolean()],
  "must be a text, a number, true or false, as the field's type takes",
);

const FIELD_COMPARISONS = FIELD_OPERATORS.filter(
  (o) => !(PRESENCE_OPERATORS as readonly string[]).includes(o),
);

/**
 * A condition on a custom field, by its shape: the operator one of any
 * type's, `value` present unless the operator tests presence. The field,
 * and what fits its type, are the domain's to check.
 */
const FieldConditionBody = v.pipe(
  condition({
    field: FieldRefBody,
    operator: v.picklist(
      FIELD_OPERATORS,
      `must be one of ${FIELD_OPERATORS.join(', ')} for a custom field (which ones depends on its type)`,
    ),
    value: v.optional(FieldConditionValue),
  }),
  v.forward(
    v.partialCheck(
      [['operator'], ['value']],
      (c) =>
        (PRESENCE_OPERATORS as readonly string[]).includes(c.operator) ===
        (c.value === undefined),
      `is required, except with ${PRESENCE_OPERATORS.join(' and ')}, which take none`,
    ),
    ['value'],
  ),
  inJsonSchema(presenceRule(FIELD_COMPARISONS, PRESENCE_OPERATORS)),
  // The check above ties the value to the operator; the domain, the
  // operator and the value to the field's type: the model's type.
  v.transform((c) => c as SegmentCondition),
);

/** One condition of a segment, checked by the schema of its field. */
export const SegmentConditionBody = v.variant(
  'field',
  [
    condition({
      field: v.literal('tag'),
      operator: operatorsOf('tag'),
      value: TagValue,
    }),
    condition({
      field: v.literal('status'),
      operator: operatorsOf('status'),
      value: StatusValue,
    }),
    condition({
      field: v.literal('emailDomain'),
      operator: operatorsOf('emailDomain'),
      value: DomainValue,
    }),
    condition({
      field: v.literal('email'),
      operator: operatorsOf('email'),
      value: TextValue,
    }),
    condition({
      field: v.literal('name'),
      operator: operatorsOf('name'),
      value: TextValue,
    }),
    dateConditions('createdAt'),
    dateConditions('joinedAt'),
    dateConditions('confirmedAt'),
    FieldConditionBody,
  ],
  `must be a condition whose field is one of ${SEGMENT_FIELDS.join(', ')}, or fields.<key> (a custom field)`,
);

// The schema and the model's type must agree.
type Agrees<T extends SegmentCondition> = T;
export type SegmentConditionInput = Agrees<
  v.InferOutput<typeof SegmentConditionBody>
>;

const Conditions = v.pipe(
  v.array(SegmentConditionBody, 'must be an array of conditions'),
  v.minLength(1, 'must hold at least one condition'),
  v.maxLength(
    MAX_SEGMENT_CONDITIONS,
    `must hold at most ${MAX_SEGMENT_CONDITIONS} conditions`,
  ),
);

const Match = v.picklist(
  SEGMENT_MATCHES,
  `must be one of ${SEGMENT_MATCHES.join(', ')}`,
);

const Name = requiredName(100);

/** Body of POST /segments. */
export const CreateSegmentBody = v.object({
  name: Name,
  listId: Id,
  match: Match,
  conditions: Conditions,
});
export type CreateSegmentInput = v.InferOutput<typeof CreateSegmentBody>;

/**
 * Body of PATCH /segments/{segmentId}. The list is fixed: a `listId` is
 * refused rather than ignored.
 */
export const UpdateSegmentBody = v.pipe(
  v.object({
    name: v.optional(Name),
    match: v.optional(Match),
    conditions: v.optional(Conditions),
    listId: v.optional(
      v.never(
        'cannot change: a segment stays over the list it was created for (create another segment)',
      ),
    ),
  }),
  v.check(
    // listId is never valid: it changes nothing.
    hasSomeField,
    'must change at least one of name, match, conditions',
  ),
);
export type UpdateSegmentInput = v.InferOutput<typeof UpdateSegmentBody>;
