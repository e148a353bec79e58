/**
 * Organization model: the tenant. Every resource belongs to exactly one.
 */
import slugifyText from '@sindresorhus/slugify';
import type { IsolationState } from '../ports.ts';

/** A tenant of the service. */
export interface Organization {
  id: string;
  name: string;
  slug: string;
  /** On the sending allowlist (set by the operator). */
  sendingAllowed: boolean;
  createdAt: string;
  /** Legal mention shown in emails ({{postalAddress}}). */
  postalAddress?: string;
  /** The last known state of its sending isolation, once attempted. */
  isolation?: IsolationState;
}

/** Turns a display name into a URL slug (lowercase ASCII words and dashes). */
export const slugify = (name: string): string =>
  slugifyText(name).slice(0, 48).replace(/-+$/, '') || 'org';
