/**
 * Custom field model: a field an organization defines for its contacts (a
 * plan, a birthday, a company), typed, with a stable key that templates and
 * segments name and a label people read.
 */

/** The types a field's values may take. */
export const FIELD_TYPES = [
  'text',
  'number',
  'date',
  'boolean',
  'option',
] as const;
export type FieldType = (typeof FIELD_TYPES)[number];

/**
 * Most fields an organization defines. Mailchimp allows 80 per audience;
 * we allow 50 per organization (fields belong to the organization, not to a
 * list): every value rides on each contact item, which stays far below
 * DynamoDB's 400 KB, and a contact write stays one small transaction.
 */
export const MAX_FIELDS = 50;

/** Most options of an `option` field. */
export const MAX_FIELD_OPTIONS = 100;

/** A value a field may hold: by its type. */
export type FieldValue = string | number | boolean;

/** A field of an organization. */
export interface Field {
  id: string;
  /** The identifier templates (`{{ fields.<key> }}`) and segments use. */
  key: string;
  label: string;
  type: FieldType;
  /** The choices of an `option` field, in the order shown. */
  options?: string[];
  /** The value a contact without one shows in templates. */
  defaultValue?: FieldValue;
  createdAt: string;
  updatedAt: string;
}
