/**
 * The error body of the spec, `{error, code, details?}`, with the status
 * the list of codes (`shared/errors.ts`) gives each code. Anything
 * unexpected is an opaque 500.
 */
import {
  AppError,
  SendingBlockedError,
  statusOf,
  ValidationError,
} from '../errors.ts';

/** An error rendered for the caller. */
export interface ErrorResponse {
  statusCode: number;
  body: { error: string; code: string; details?: unknown };
  /** Whether the error is unexpected and must be logged with its cause. */
  unexpected: boolean;
}

/** Maps any thrown value to the response the caller sees. */
export const toErrorResponse = (error: unknown): ErrorResponse => {
  if (error instanceof AppError) {
    const body: ErrorResponse['body'] = {
      error: error.message,
      code: error.code,
    };
    if (
      error instanceof ValidationError ||
      error instanceof SendingBlockedError
    ) {
      body.details = error.details;
    }
    const statusCode = statusOf(error.code);
    return {
      statusCode,
      body,
      unexpected: statusCode >= 500 && statusCode !== 503,
    };
  }
  return {
    statusCode: 500,
    body: {
      error: 'Internal server error; it was logged and will be looked at',
      code: 'internal',
    },
    unexpected: true,
  };
};
