/**
 * Sign-up pages: hosted forms that grow one list through double opt-in.
 * A page is made from one of our themes or from pasted (sanitized) HTML,
 * and is served publicly only while it is published.
 */
import type { PageContent, ThemeName } from './page-model.ts';

/** The sign-up form's hourly counter of one address in an organization. */
export const addressCounter = (orgId: string, email: string): string =>
  `ORG#${orgId}#EMAIL#${email}`;

/** Where a page stands: only a published page answers at its address. */
export const SIGNUP_PAGE_STATUSES = ['draft', 'published'] as const;
export type SignupPageStatus = (typeof SIGNUP_PAGE_STATUSES)[number];

/** A sign-up page of an organization. */
export interface SignupPage {
  id: string;
  /** Internal name (the visitor never sees it). */
  name: string;
  /** Last part of the public address; unique in the organization. */
  slug: string;
  status: SignupPageStatus;
  listId: string;
  /** The list's name when the page was pointed at it (lists are never renamed). */
  listName: string;
  /** The theme the page is drawn with; null for pasted HTML. */
  theme: ThemeName | null;
  /** What the page says and asks. */
  content: PageContent;
  /** Bumped by every change of what a visitor sees: consent records name it. */
  version: number;
  createdAt: string;
  updatedAt: string;
  publishedAt?: string;
}

/** The sanitized HTML of a pasted page, stored beside it. */
export interface PastedHtml {
  html: string;
}

/** The most pages one organization may have (filters read them all). */
export const MAX_SIGNUP_PAGES = 500;
