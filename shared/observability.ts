/**
 * Structured logging (Powertools Logger): JSON lines with the service name,
 * the request id and, on errors, the cause.
 */
import { Logger } from '@aws-lambda-powertools/logger';

/** The one logger of a container. */
export const logger = new Logger({ serviceName: 'email-marketing' });
