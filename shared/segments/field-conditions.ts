/**
 * Conditions on custom fields, against the organization's fields: the
 * field a condition names must exist, its operator fit the field's type
 * and its value fit the field (the checks contact values pass). Also the
 * keys a segment names, which its writes hold so that a field in use is
 * never deleted. Agnostic to where fields are stored.
 */
import { type FieldIssue, ValidationError } from '../errors.ts';
import { valueIssue } from '../fields/field.schema.ts';
import type { Field } from '../fields/model.ts';
import type { FieldsDeps } from '../fields/ports.ts';
import { definitionsOf } from '../fields/values.ts';
import {
  FIELD_CONDITION_OPERATORS,
  type FieldCondition,
  isFieldRef,
  keyOfFieldRef,
  type SegmentCondition,
} from './model.ts';

/** The conditions on custom fields, with their index in the segment. */
const fieldConditionsOf = (conditions: readonly SegmentCondition[]) =>
  conditions.flatMap((condition, index) =>
    isFieldRef(condition.field)
      ? [{ index, condition: condition as FieldCondition }]
      : [],
  );

/** The keys of the custom fields a segment's conditions name, each once. */
export const fieldKeysOf = (conditions: readonly SegmentCondition[]) => [
  ...new Set(
    fieldConditionsOf(conditions).map(({ condition }) =>
      keyOfFieldRef(condition.field),
    ),
  ),
];

const NOT_A_FIELD = 'is not a field of the organization (see GET /fields)';

/** What is wrong with one condition on the field `field` (if it exists). */
const issuesOf = (
  index: number,
  condition: FieldCondition,
  field: Field | undefined,
): FieldIssue[] => {
  const at = (part: string) => `conditions.${index}.${part}`;
  if (!field) return [{ field: at('field'), message: NOT_A_FIELD }];
  const operators: readonly string[] = FIELD_CONDITION_OPERATORS[field.type];
  if (!operators.includes(condition.operator)) {
    return [
      {
        field: at('operator'),
        message: `must be one of ${operators.join(', ')} for the ${field.type} field ${field.key}`,
      },
    ];
  }
  if (!('value' in condition)) return [];
  const issue = valueIssue(field.type, condition.value, field.options);
  if (issue) return [{ field: at('value'), message: issue }];
  if (
    condition.operator === 'contains' ||
    condition.operator === 'notContains'
  ) {
    if (condition.value === '') {
      return [{ field: at('value'), message: 'must not be empty' }];
    }
  }
  return [];
};

/**
 * A condition as stored: the text of `contains` and `notContains`
 * lower-cased (they compare case-insensitively, as the contact's own texts
 * do); every other value as given (equality is exact).
 */
const normalized = (condition: SegmentCondition): SegmentCondition =>
  isFieldRef(condition.field) &&
  (condition.operator === 'contains' || condition.operator === 'notContains')
    ? { ...condition, value: condition.value.toLowerCase() }
    : condition;

/** The refusal of conditions: 400 naming each path wrong. */
const refusal = (issues: FieldIssue[]) =>
  new ValidationError(
    `Invalid request: ${issues.map((i) => `${i.field}: ${i.message}`).join('; ')}`,
    issues,
  );

/**
 * Checks the conditions on custom fields against the organization's
 * fields: one Query (at most 50 small items), only when a condition names
 * a field. 400 naming `conditions.<i>.field` (no such field),
 * `.operator` (not one of its type's) or `.value` (does not fit it).
 * Answers the conditions as stored, and the id of each field named by key
 * (the segment's write holds exactly those fields).
 */
export const checkFieldConditions = async (
  deps: Pick<FieldsDeps, 'fields'>,
  orgId: string,
  conditions: readonly SegmentCondition[],
): Promise<{
  conditions: SegmentCondition[];
  fieldIds: Map<string, string>;
}> => {
  const named = fieldConditionsOf(conditions);
  if (!named.length)
    return { conditions: [...conditions], fieldIds: new Map() };
  const definitions = await definitionsOf(deps, orgId);
  const issues = named.flatMap(({ index, condition }) =>
    issuesOf(index, condition, definitions.get(keyOfFieldRef(condition.field))),
  );
  if (issues.length) throw refusal(issues);
  const fieldIds = new Map(
    fieldKeysOf(conditions).map((key) => [
      key,
      (definitions.get(key) as Field).id,
    ]),
  );
  return { conditions: conditions.map(normalized), fieldIds };
};

/**
 * The refusal of a segment write whose field `key` was deleted after the
 * conditions were checked (the write's condition on the field failed):
 * 400 naming each condition that names it, as the check would have.
 */
export const fieldGone = (
  conditions: readonly SegmentCondition[],
  key: string,
  cause?: unknown,
): ValidationError => {
  const issues = fieldConditionsOf(conditions)
    .filter(({ condition }) => keyOfFieldRef(condition.field) === key)
    .map(({ index }) => ({
      field: `conditions.${index}.field`,
      message: NOT_A_FIELD,
    }));
  return new ValidationError(
    `Invalid request: ${issues.map((i) => `${i.field}: ${i.message}`).join('; ')}`,
    issues,
    { cause },
  );
};
