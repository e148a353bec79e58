/**
 * The segment evaluator: whether one contact belongs to a segment. Pure (no
 * I/O, no clock), so the live count, `GET /contacts?segmentId=` and the
 * series fan-out at fire time all decide membership the same way.
 */
import type { Contact } from '../audience/model.ts';
import {
  type FieldCondition,
  isFieldRef,
  keyOfFieldRef,
  type Segment,
  type SegmentCondition,
} from './model.ts';

/** What the evaluator reads of a contact. */
export type SegmentContact = Pick<
  Contact,
  | 'email'
  | 'firstName'
  | 'lastName'
  | 'status'
  | 'tagIds'
  | 'createdAt'
  | 'joinedAt'
  | 'confirmedAt'
  | 'fields'
>;

const lower = (text: string | undefined) => (text ?? '').toLowerCase();

/** The domain of an address: what follows its last `@`. */
const domainOf = (email: string) =>
  lower(email.slice(email.lastIndexOf('@') + 1));

/**
 * The texts a `name` condition searches: each name alone and both joined
 * by a space (so "ada love" finds Ada Lovelace).
 */
const namesOf = (contact: SegmentContact) =>
  [
    contact.firstName,
    contact.lastName,
    [contact.firstName, contact.lastName].filter(Boolean).join(' '),
  ].map(lower);

const instant = (value: string | undefined) =>
  value === undefined ? undefined : Date.parse(value);

/**
 * Whether a contact meets a condition on a custom field, by the value it
 * holds (never the field's default: a segment selects by stored data).
 * Values are compared only with a value of the same JavaScript type (a
 * date is a `YYYY-MM-DD` string, so days compare as strings); the negated
 * operators are the exact complements of theirs, so a contact without a
 * value is in `isNot`, `notContains` and `notExists`.
 */
const matchesFieldCondition = (
  condition: FieldCondition,
  contact: SegmentContact,
): boolean => {
  const held = contact.fields?.[keyOfFieldRef(condition.field)];
  switch (condition.operator) {
    case 'exists':
      return held !== undefined;
    case 'notExists':
      return held === undefined;
    case 'is':
      return held === condition.value;
    case 'isNot':
      return held !== condition.value;
    case 'contains':
    case 'notContains': {
      const contains =
        typeof held === 'string' &&
        lower(held).includes(lower(condition.value));
      return condition.operator === 'contains' ? contains : !contains;
    }
    case 'greaterThan':
      return typeof held === 'number' && held > condition.value;
    case 'lessThan':
      return typeof held === 'number' && held < condition.value;
    case 'before':
      return typeof held === 'string' && held < condition.value;
    case 'after':
      return typeof held === 'string' && held > condition.value;
  }
};

/** Whether one contact meets one condition. */
export const matchesCondition = (
  condition: SegmentCondition,
  contact: SegmentContact,
): boolean => {
  if (isFieldRef(condition.field)) {
    return matchesFieldCondition(condition as FieldCondition, contact);
  }
  switch (condition.field) {
    case 'tag': {
      const has = contact.tagIds.includes(condition.value);
      return condition.operator === 'has' ? has : !has;
    }
    case 'status': {
      const is = contact.status === condition.value;
      return condition.operator === 'is' ? is : !is;
    }
    case 'emailDomain': {
      const is = domainOf(contact.email) === lower(condition.value);
      return condition.operator === 'is' ? is : !is;
    }
    case 'email':
    case 'name': {
      const needle = lower(condition.value);
      const haystacks =
        condition.field === 'email' ? [lower(contact.email)] : namesOf(contact);
      const contains = haystacks.some((text) => text.includes(needle));
      return condition.operator === 'contains' ? contains : !contains;
    }
    case 'createdAt':
    case 'joinedAt':
    case 'confirmedAt': {
      const at = instant(contact[condition.field]);
      switch (condition.operator) {
        case 'exists':
          return at !== undefined;
        case 'notExists':
          return at === undefined;
        case 'before':
          return at !== undefined && at < Date.parse(condition.value);
        case 'after':
          return at !== undefined && at > Date.parse(condition.value);
      }
    }
  }
};

/**
 * Whether a contact belongs to a segment: it meets every condition
 * (`match: all`) or at least one (`match: any`). The segment's list is not
 * checked here: callers evaluate the contacts of that list. With no
 * condition, `all` matches every contact and `any` none (a stored segment
 * always has one at least).
 */
export const matchesSegment = (
  segment: Pick<Segment, 'match' | 'conditions'>,
  contact: SegmentContact,
): boolean =>
  segment.match === 'all'
    ? segment.conditions.every((condition) =>
        matchesCondition(condition, contact),
      )
    : segment.conditions.some((condition) =>
        matchesCondition(condition, contact),
      );
