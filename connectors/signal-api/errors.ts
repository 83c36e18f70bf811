/**
 * Typed errors of the Signal Data Service client.
 *
 * Every error the client throws for a failed call is a `SignalApiError` (except a caller's own abort, which
 * rethrows the caller's abort reason). The class says what went wrong; `isRetryable` says whether trying the
 * same call again can help:
 *
 * | class                      | when                                                        | retryable |
 * |----------------------------|-------------------------------------------------------------|-----------|
 * | `ValidationError`          | 400, 422, and limits checked before sending (`status` 0)   | no        |
 * | `AuthenticationError`      | 401, 403                                                    | no        |
 * | `InsufficientCreditsError` | 402                                                         | no        |
 * | `NotFoundError`            | 404, 410 (an expired download link, `code` `gone`)          | no        |
 * | `RateLimitedError`         | 429, with `retryAfterMs` from `Retry-After`                 | yes       |
 * | `ServerError`              | 5xx                                                         | yes       |
 * | `NetworkError`             | timeouts, refused/reset connections, a 2xx body that is not  | yes       |
 * |                            | complete JSON (`code` `malformed_body`), a cut-off download  |           |
 * | `UnexpectedResponseError`  | complete JSON that does not have the documented shape       | no        |
 * | `SignalApiError` itself    | any other status (405, 409, 413, ...)                       | no        |
 *
 * A 2xx answer whose body is cut off or is not JSON is treated as an interrupted transfer: a `NetworkError`
 * (retryable), because the bytes never arrived whole; the service does not charge a response it did not finish.
 * Messages never contain the API key.
 */

export interface SignalApiErrorInit {
  status: number;
  code: string;
  message: string;
  requestId?: string | undefined;
  field?: string | undefined;
  /** HTTP method and path (without query) of the failed call, for messages and logs. */
  method?: string | undefined;
  path?: string | undefined;
  /** `Retry-After` in milliseconds, when the server sent one. */
  retryAfterMs?: number | undefined;
  /** `x-credits-charged` of the failed answer, when it carried one (a 5xx after the work says what it cost). */
  creditsCharged?: number | undefined;
  /** The parsed JSON body of an answer whose shape was not the documented one, so a caller can still use it. */
  body?: unknown;
  cause?: unknown;
}

export class SignalApiError extends Error {
  /** HTTP status; 0 when no response was received or the call was refused before sending. */
  readonly status: number;
  /** Machine-readable code: the server's `error.code`, or one derived from the status. */
  readonly code: string;
  /** The server's `x-request-id` (or `error.request_id`), when sent. */
  readonly requestId: string | undefined;
  /** The request field the error is about, when known. */
  readonly field: string | undefined;
  readonly method: string | undefined;
  readonly path: string | undefined;
  /**
   * Credits the service says this failed call charged (`x-credits-charged` on the failed answer); undefined when
   * no answer said (a reset, a timeout, a gateway's page without the header): then the cost is unknown.
   */
  readonly creditsCharged: number | undefined;
  /** The JSON body of an answer that did not have the documented shape (`UnexpectedResponseError`). */
  readonly body: unknown;

  constructor(init: SignalApiErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = 'SignalApiError';
    this.status = init.status;
    this.code = init.code;
    this.requestId = init.requestId;
    this.field = init.field;
    this.method = init.method;
    this.path = init.path;
    this.creditsCharged = init.creditsCharged;
    this.body = init.body;
  }

  /** Whether repeating the same call can succeed (429, 5xx, network failures). */
  get retryable(): boolean {
    return false;
  }

  toJSON(): Record<string, unknown> {
    return {
      name: this.name,
      status: this.status,
      code: this.code,
      message: this.message,
      requestId: this.requestId,
      field: this.field,
      method: this.method,
      path: this.path,
      creditsCharged: this.creditsCharged,
      retryable: this.retryable,
    };
  }
}

/** 400 or 422 from the server, or a limit checked by the client before sending (then `status` is 0). */
export class ValidationError extends SignalApiError {
  constructor(init: SignalApiErrorInit) {
    super(init);
    this.name = 'ValidationError';
  }
}

/** 401 (missing or unknown key) or 403 (forbidden, or a bad download-link signature). */
export class AuthenticationError extends SignalApiError {
  constructor(init: SignalApiErrorInit) {
    super(init);
    this.name = 'AuthenticationError';
  }
}

/** 402: the account's balance does not cover the call; nothing was charged. */
export class InsufficientCreditsError extends SignalApiError {
  constructor(init: SignalApiErrorInit) {
    super(init);
    this.name = 'InsufficientCreditsError';
  }
}

/** 404, or 410 for an expired signed download link (`code` `gone`). */
export class NotFoundError extends SignalApiError {
  constructor(init: SignalApiErrorInit) {
    super(init);
    this.name = 'NotFoundError';
  }
}

/** 429. `retryAfterMs` is the server's `Retry-After` (seconds or an HTTP date) in milliseconds, when sent. */
export class RateLimitedError extends SignalApiError {
  readonly retryAfterMs: number | undefined;
  constructor(init: SignalApiErrorInit) {
    super(init);
    this.name = 'RateLimitedError';
    this.retryAfterMs = init.retryAfterMs;
  }
  override get retryable(): boolean {
    return true;
  }
}

/** 5xx. `retryAfterMs` is set when a 503 carried `Retry-After`. */
export class ServerError extends SignalApiError {
  readonly retryAfterMs: number | undefined;
  constructor(init: SignalApiErrorInit) {
    super(init);
    this.name = 'ServerError';
    this.retryAfterMs = init.retryAfterMs;
  }
  override get retryable(): boolean {
    return true;
  }
}

/**
 * No usable answer: a timeout, a refused or reset connection, a 2xx body cut off or not JSON
 * (`malformed_body`), a download shorter than its `Content-Length` (`truncated_body`).
 * `status` is the HTTP status when headers had arrived, else 0.
 */
export class NetworkError extends SignalApiError {
  constructor(init: SignalApiErrorInit) {
    super(init);
    this.name = 'NetworkError';
  }
  override get retryable(): boolean {
    // An answer over the size cap will be over it again.
    return this.code !== 'answer_too_large';
  }
  /** True when the request provably never reached the server (refused connection, DNS, connect timeout). */
  get notSent(): boolean {
    return NOT_SENT_CODES.has(this.code);
  }
}

/** A complete JSON body that does not have the documented shape. Retrying the same call will not help. */
export class UnexpectedResponseError extends SignalApiError {
  constructor(init: SignalApiErrorInit) {
    super(init);
    this.name = 'UnexpectedResponseError';
  }
}

const NOT_SENT_CODES = new Set(['connection_refused', 'connect_timeout', 'dns_failure']);

const RETRYABLE_SYSTEM_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_CLOSED',
  'UND_ERR_RES_CONTENT_LENGTH_MISMATCH',
]);

/**
 * Whether a failure is worth retrying: 429, 5xx and network failures are; 400/401/402/403/404/410/422, a
 * client-side validation failure and an unexpected response shape are not. Raw socket errors (ECONNRESET, undici
 * socket and timeout errors) that did not pass through the client also count as retryable.
 * The Temporal activities use this to mark failures non-retryable.
 */
export function isRetryable(err: unknown): boolean {
  if (err instanceof SignalApiError) return err.retryable;
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    return typeof code === 'string' && RETRYABLE_SYSTEM_CODES.has(code);
  }
  return false;
}

/** The delay the server asked for before the next attempt (`Retry-After`), when it asked for one. */
export function retryAfterMsOf(err: unknown): number | undefined {
  if (err instanceof RateLimitedError || err instanceof ServerError) return err.retryAfterMs;
  return undefined;
}

/** The typed error class for an HTTP status. */
export function errorClassForStatus(status: number): new (init: SignalApiErrorInit) => SignalApiError {
  if (status === 400 || status === 422) return ValidationError;
  if (status === 401 || status === 403) return AuthenticationError;
  if (status === 402) return InsufficientCreditsError;
  if (status === 404 || status === 410) return NotFoundError;
  if (status === 408) return NetworkError;
  if (status === 429) return RateLimitedError;
  if (status >= 500 && status <= 599) return ServerError;
  return SignalApiError;
}

/** A client-side check failed; nothing was sent. */
export function clientValidationError(field: string, message: string): ValidationError {
  return new ValidationError({ status: 0, code: 'validation_error', field, message: `${field}: ${message}` });
}
