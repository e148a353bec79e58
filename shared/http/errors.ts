/**
 * The one table from domain error to HTTP status, and the error body of the
 * spec: `{error, code, details?}`. Anything unexpected is an opaque 500.
 */
import {
  type AppError,
  ConflictError,
  ForbiddenError,
  NotFoundError,
  PayloadTooLargeError,
  RateLimitedError,
  RuleViolationError,
  ServiceUnavailableError,
  UnauthorizedError,
  UnsupportedMediaTypeError,
  ValidationError,
} from '../errors.ts';

const STATUS = new Map<new (...args: never[]) => AppError, number>([
  [ValidationError, 400],
  [RuleViolationError, 400],
  [UnauthorizedError, 401],
  [ForbiddenError, 403],
  [NotFoundError, 404],
  [ConflictError, 409],
  [PayloadTooLargeError, 413],
  [UnsupportedMediaTypeError, 415],
  [RateLimitedError, 429],
  [ServiceUnavailableError, 503],
]);

/** An error rendered for the caller. */
export interface ErrorResponse {
  statusCode: number;
  body: { error: string; code: string; details?: unknown };
  /** Whether the error is unexpected and must be logged with its cause. */
  unexpected: boolean;
}

/** Maps any thrown value to the response the caller sees. */
export const toErrorResponse = (error: unknown): ErrorResponse => {
  for (const [type, statusCode] of STATUS) {
    if (error instanceof type) {
      const body: ErrorResponse['body'] = {
        error: error.message,
        code: error.code,
      };
      if (error instanceof ValidationError) body.details = error.details;
      return { statusCode, body, unexpected: false };
    }
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
