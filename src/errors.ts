/**
 * The one error type that crosses layers. Each carries the HTTP status and the
 * stable `code` of the error contract (docs/design.md), so `http/errors.ts` can map
 * any failure to `{"error":{"code","message"}}` in one place.
 */
export type ErrorCode =
  | 'missing_signature'
  | 'invalid_signature'
  | 'timestamp_out_of_tolerance'
  | 'invalid_payload'
  | 'payload_too_large'
  | 'request_timeout'
  | 'unsupported_media_type'
  | 'not_configured'
  | 'unavailable'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'method_not_allowed'
  | 'conflict'
  | 'too_many_requests'
  | 'bad_request'
  | 'internal_error';

const STATUS_BY_CODE: Record<ErrorCode, number> = {
  missing_signature: 400,
  invalid_signature: 400,
  timestamp_out_of_tolerance: 400,
  invalid_payload: 400,
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  request_timeout: 408,
  payload_too_large: 413,
  too_many_requests: 429,
  unsupported_media_type: 415,
  internal_error: 500,
  not_configured: 503,
  unavailable: 503,
};

/** A failure with a stable code and a message that tells the caller what to do. */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'AppError';
    this.code = code;
    this.status = STATUS_BY_CODE[code];
  }
}

/** A configuration problem found at start-up: the message names the setting and the fix. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/** Narrow an unknown thrown value to a message without leaking stacks. */
export function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}
