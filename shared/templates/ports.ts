/**
 * Ports of templates: their store. A test send also needs the sending
 * setup (its From and guards); a template reading custom fields, the
 * organization's fields (which keys are unknown, which defaults show).
 */
import type { FieldsDeps } from '../fields/ports.ts';
import type { Page, PageRequest } from '../ports.ts';
import type { SendingDeps } from '../sending/ports.ts';
import type { Template, TemplateSummary } from './model.ts';

/** Templates of an organization. */
export interface TemplateRepository {
  create(orgId: string, template: Template): Promise<void>;
  get(orgId: string, templateId: string): Promise<Template | undefined>;
  /** Replaces the template; `NotFoundError` when it does not exist. */
  update(orgId: string, template: Template): Promise<void>;
  /** `NotFoundError` when it does not exist. */
  delete(orgId: string, templateId: string): Promise<void>;
  /** Newest first, without HTML. */
  page(orgId: string, request: PageRequest): Promise<Page<TemplateSummary>>;
}

/** What templates need. */
export interface TemplatesDeps extends SendingDeps, Pick<FieldsDeps, 'fields'> {
  templates: TemplateRepository;
}
