/**
 * Domain errors. They know nothing about HTTP: `shared/http/errors.ts` holds
 * the one table from error class to status code.
 */

/** One issue of a failed validation, naming the offending field. */
export interface FieldIssue {
  /** Dotted path of the field, e.g. `contacts.3.email`; `body` for the whole body. */
  field: string;
  message: string;
}

/** Base class of every error the service raises on purpose. */
export class AppError extends Error {
  /** Stable machine code, e.g. `list.notFound`; clients may branch on it. */
  readonly code: string;

  constructor(code: string, message: string, options?: ErrorOptions) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
  }
}

/** The input is invalid; `details` names each offending field. */
export class ValidationError extends AppError {
  readonly details: FieldIssue[];

  constructor(
    message: string,
    details: FieldIssue[],
    options?: ErrorOptions & { code?: string },
  ) {
    super(options?.code ?? 'request.invalid', message, options);
    this.details = details;
  }
}

/** A rule of the domain refuses the request (a 400 without field details). */
export class RuleViolationError extends AppError {}

/** The resource does not exist, or belongs to another organization. */
export class NotFoundError extends AppError {}

/** The request conflicts with the current state (a taken name, a race). */
export class ConflictError extends AppError {}

/** Missing, unknown or revoked credentials. */
export class UnauthorizedError extends AppError {}

/** A legitimate caller whose role is too low. */
export class ForbiddenError extends AppError {}

/** The caller exceeded its request rate; nothing was done. */
export class RateLimitedError extends AppError {
  constructor(readonly retryAfterSeconds: number) {
    super(
      'rateLimit.exceeded',
      `Rate limit exceeded: at most 120 requests per key in any 60 seconds; retry in ${retryAfterSeconds} s`,
    );
  }
}

/** A request body or collection over a documented size limit. */
export class PayloadTooLargeError extends AppError {}

/** The body is not JSON. */
export class UnsupportedMediaTypeError extends AppError {}

/** A dependency (the email provider, DNS) cannot be reached right now. */
export class ServiceUnavailableError extends AppError {}

/** A public link whose signature or purpose does not check out. */
export class InvalidLinkError extends AppError {}

/** A public link past its expiry. */
export class ExpiredLinkError extends AppError {}
