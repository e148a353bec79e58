/**
 * Schemas of the texts a message is made of — a subject and an HTML
 * content — shared by templates and the opt-in email. Limits are in UTF-8
 * bytes, so that what is accepted always fits its DynamoDB item (400 KB for
 * all of an item's attributes together).
 */
import * as v from 'valibot';
import { lineText, multilineText } from '../validation.ts';

/** Largest subject: one line, in UTF-8 bytes. */
export const MAX_SUBJECT_BYTES = 400;

/** Largest HTML content, in UTF-8 bytes: room is left for the other fields. */
export const MAX_CONTENT_BYTES = 300_000;

/**
 * A subject (Liquid): one line — no CR, LF, NUL or other control character,
 * since it becomes a mail header — trimmed, not empty.
 */
export const Subject = v.pipe(
  lineText(MAX_SUBJECT_BYTES),
  v.trim(),
  v.minLength(1, 'must not be empty'),
);

/** An HTML content (Liquid): line breaks allowed, other controls refused. */
export const HtmlContent = v.pipe(
  multilineText(MAX_CONTENT_BYTES),
  v.minLength(1, 'must not be empty'),
);
