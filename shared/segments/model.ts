/**
 * Segment model: a saved filter over the contacts of one list. A segment
 * names its list for good, says whether a contact must meet all of its
 * conditions or any of them, and keeps which series use it (so that one in
 * use is never deleted from under them). Its conditions test the contact's
 * own attributes, or a custom field by key (`fields.<key>`).
 */
import type { ContactStatus } from '../audience/model.ts';
import type { FieldType, FieldValue } from '../fields/model.ts';

/** Whether a contact must meet every condition, or at least one. */
export const SEGMENT_MATCHES = ['all', 'any'] as const;
export type SegmentMatch = (typeof SEGMENT_MATCHES)[number];

/** Most conditions one segment holds. */
export const MAX_SEGMENT_CONDITIONS = 20;

/** The contact fields a condition can test, by the names the API shows. */
export const SEGMENT_FIELDS = [
  'tag',
  'status',
  'emailDomain',
  'email',
  'name',
  'createdAt',
  'joinedAt',
  'confirmedAt',
] as const;
export type SegmentField = (typeof SEGMENT_FIELDS)[number];

/** Dates every contact has (`createdAt`: when it was added to its list). */
export const ALWAYS_SET_DATES = ['createdAt'] as const;
/** Dates a contact may lack (never joined, never confirmed). */
export const OPTIONAL_DATES = ['joinedAt', 'confirmedAt'] as const;
/** Every date field. */
export type DateField =
  | (typeof ALWAYS_SET_DATES)[number]
  | (typeof OPTIONAL_DATES)[number];

/**
 * One condition. Values are stored normalized: texts and domains
 * lower-cased, instants in UTC (`toISOString`).
 */
export type SegmentCondition =
  /** The contact carries (`has`) or lacks (`hasNot`) the tag of this id. */
  | { field: 'tag'; operator: 'has' | 'hasNot'; value: string }
  /** The contact's status is (or is not) this one. */
  | { field: 'status'; operator: 'is' | 'isNot'; value: ContactStatus }
  /** The part of the address after `@` is (or is not) exactly this domain. */
  | { field: 'emailDomain'; operator: 'is' | 'isNot'; value: string }
  /**
   * The address, or the name (first name, last name, or both joined by a
   * space), contains (or does not contain) this text, case-insensitively.
   */
  | {
      field: 'email' | 'name';
      operator: 'contains' | 'notContains';
      value: string;
    }
  /** The date is strictly before or after this instant (false when unset). */
  | { field: DateField; operator: 'before' | 'after'; value: string }
  /** The date is set, or not. */
  | {
      field: (typeof OPTIONAL_DATES)[number];
      operator: 'exists' | 'notExists';
    }
  /** A custom field's value (see {@link FieldCondition}). */
  | FieldCondition;

/**
 * A custom field named by a condition: `fields.<key>`, as values are named
 * in a request's `details` and as templates will name them.
 */
export type FieldRef = `fields.${string}`;

/** The prefix of a condition's `field` that names a custom field. */
export const FIELD_REF_PREFIX = 'fields.';

/** Whether a condition's `field` names a custom field. */
export const isFieldRef = (field: string): field is FieldRef =>
  field.startsWith(FIELD_REF_PREFIX);

/** The key of the custom field a condition names. */
export const keyOfFieldRef = (field: FieldRef): string =>
  field.slice(FIELD_REF_PREFIX.length);

/**
 * A condition on a custom field. Only stored values count: a contact
 * without a value (whatever the field's default) matches `notExists`,
 * `isNot` and `notContains`, and none of the others. Equality is exact;
 * `contains` is case-insensitive, its text stored lower-cased.
 */
export type FieldCondition =
  /** The value is (or is not) exactly this one. */
  | { field: FieldRef; operator: 'is' | 'isNot'; value: FieldValue }
  /** A text value contains (or does not contain) this text. */
  | { field: FieldRef; operator: 'contains' | 'notContains'; value: string }
  /** A number value is strictly greater or less than this one. */
  | { field: FieldRef; operator: 'greaterThan' | 'lessThan'; value: number }
  /** A date value (`YYYY-MM-DD`) is strictly before or after this day. */
  | { field: FieldRef; operator: 'before' | 'after'; value: string }
  /** The contact holds a value, or not. */
  | { field: FieldRef; operator: 'exists' | 'notExists' };

/** The operators of a condition on a custom field, by the field's type. */
export const FIELD_CONDITION_OPERATORS = {
  text: ['is', 'isNot', 'contains', 'notContains', 'exists', 'notExists'],
  number: ['is', 'isNot', 'greaterThan', 'lessThan', 'exists', 'notExists'],
  date: ['is', 'isNot', 'before', 'after', 'exists', 'notExists'],
  boolean: ['is', 'isNot', 'exists', 'notExists'],
  option: ['is', 'isNot', 'exists', 'notExists'],
} as const satisfies Record<FieldType, readonly FieldCondition['operator'][]>;

/** Every operator a condition on a custom field takes, whatever its type. */
export const FIELD_OPERATORS = [
  ...new Set(Object.values(FIELD_CONDITION_OPERATORS).flat()),
] as FieldCondition['operator'][];

/** The operators of a custom field's condition that take no value. */
export const PRESENCE_OPERATORS = ['exists', 'notExists'] as const;

/** Every operator, by field (the API's vocabulary). */
export const SEGMENT_OPERATORS = {
  tag: ['has', 'hasNot'],
  status: ['is', 'isNot'],
  emailDomain: ['is', 'isNot'],
  email: ['contains', 'notContains'],
  name: ['contains', 'notContains'],
  createdAt: ['before', 'after'],
  joinedAt: ['before', 'after', 'exists', 'notExists'],
  confirmedAt: ['before', 'after', 'exists', 'notExists'],
} as const satisfies Record<SegmentField, readonly string[]>;

/** A segment of an organization. */
export interface Segment {
  id: string;
  name: string;
  /** The list whose contacts the segment filters; fixed at creation. */
  listId: string;
  match: SegmentMatch;
  conditions: SegmentCondition[];
  createdAt: string;
  updatedAt: string;
  /**
   * The series that use the segment, series id → series name. Written by
   * the series' own transactions (`useSegment`, `releaseSegment` of the
   * segment repository adapter); a segment with any entry cannot be deleted.
   */
  usedBy: Record<string, string>;
}
