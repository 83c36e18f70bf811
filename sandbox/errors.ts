/**
 * The sandbox's error vocabulary (README "Error body"): one class carrying status, code, message, the offending
 * field and extra headers, and the JSON body every error response uses.
 */

export type ErrorCode =
  | 'invalid_json'
  | 'unauthorized'
  | 'insufficient_credits'
  | 'forbidden'
  | 'not_found'
  | 'method_not_allowed'
  | 'gone'
  | 'range_not_satisfiable'
  | 'payload_too_large'
  | 'validation_error'
  | 'rate_limited'
  | 'internal_error'
  | 'bad_gateway'
  | 'upstream_failure'
  | 'unavailable';

export class ApiError extends Error {
  readonly status: number;
  readonly code: ErrorCode;
  readonly field: string | undefined;
  readonly headers: Record<string, string>;

  constructor(status: number, code: ErrorCode, message: string, field?: string, headers: Record<string, string> = {}) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
    this.field = field;
    this.headers = headers;
  }
}

export interface ErrorBody {
  error: { code: ErrorCode; message: string; field?: string; request_id: string };
}

export function errorBody(err: ApiError, requestId: string): ErrorBody {
  const error: ErrorBody['error'] = { code: err.code, message: err.message, request_id: requestId };
  if (err.field !== undefined) error.field = err.field;
  return { error };
}

export const invalidJson = (message = 'request body is not valid JSON'): ApiError =>
  new ApiError(400, 'invalid_json', message);

export const validationError = (field: string, message: string): ApiError =>
  new ApiError(422, 'validation_error', `${field}: ${message}`, field);

export const notFound = (message = 'not found'): ApiError => new ApiError(404, 'not_found', message);

export const unauthorized = (message = 'missing or unknown API key'): ApiError =>
  new ApiError(401, 'unauthorized', message);

export const insufficientCredits = (needed: number, balance: number): ApiError =>
  new ApiError(
    402,
    'insufficient_credits',
    `this call costs ${needed} credits but the balance is ${balance}; nothing was charged`,
  );
