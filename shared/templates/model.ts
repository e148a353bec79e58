/**
 * Template model: a reusable starting point (name, default subject, HTML).
 * Campaigns and sequence steps copy a template's content when they are
 * created from it, so editing or deleting a template never changes them.
 */

/** A template of an organization. */
export interface Template {
  id: string;
  name: string;
  defaultSubject: string;
  /** HTML with Liquid variables. */
  content: string;
  createdAt: string;
  updatedAt: string;
}

/** A template without its HTML (list rows). */
export type TemplateSummary = Omit<Template, 'content'>;
