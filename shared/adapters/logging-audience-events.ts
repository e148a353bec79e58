/**
 * Driven adapter: where audience events go until automation subscribes. It
 * logs each event (one JSON line), so an operator can see joins and
 * taggings; the sequences work replaces it with the enrolment dispatcher.
 */
import type { AudienceEvent } from '../audience/events.ts';
import type { AudienceEvents } from '../audience/ports.ts';
import { logger } from '../observability.ts';

/** Logs audience events. */
export const loggingAudienceEvents: AudienceEvents = {
  publish: async (events: AudienceEvent[]) => {
    for (const event of events) logger.info('Audience event', { event });
  },
};
