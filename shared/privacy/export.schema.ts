/**
 * Schemas of the export's requests: the address to export, in a body.
 */
import * as v from 'valibot';
import { EmailAddress } from '../validation.ts';

/**
 * `POST /exports`: the address whose data to export. In a body, not in a
 * URL: a path or query string is written to access logs, a body is not.
 */
export const ExportBody = v.object({
  email: v.pipe(
    EmailAddress,
    v.description(
      'The address (trimmed and lower-cased, as contacts keep it) whose data to export',
    ),
  ),
});
