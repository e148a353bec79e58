/**
 * Ports of custom fields: their store.
 */
import type { CoreDeps, Page, PageRequest } from '../ports.ts';
import type { Field } from './model.ts';

/** The fields of an organization, their keys unique. */
export interface FieldRepository {
  /**
   * `ConflictError` `field.keyTaken` when the key is taken;
   * `RuleViolationError` `field.limitReached` past the limit.
   */
  create(orgId: string, field: Field): Promise<void>;
  get(orgId: string, fieldId: string): Promise<Field | undefined>;
  /** Newest first. */
  page(orgId: string, request: PageRequest): Promise<Page<Field>>;
  /** Replaces the field; `ConflictError` `field.changed` when it changed meanwhile. */
  update(orgId: string, before: Field, after: Field): Promise<void>;
  /**
   * Deletes the field; its key stays reserved (retired): contacts may still
   * hold values under it. False, with nothing written, while a segment's
   * conditions name the key (see `segmentsUsing`); `NotFoundError` when
   * missing.
   */
  delete(orgId: string, field: Field): Promise<boolean>;
  /**
   * The segments whose conditions name the field's key (strongly
   * consistent), by id.
   */
  segmentsUsing(
    orgId: string,
    field: Field,
  ): Promise<{ id: string; name: string }[]>;
}

/** What fields need. */
export interface FieldsDeps extends CoreDeps {
  fields: FieldRepository;
}
