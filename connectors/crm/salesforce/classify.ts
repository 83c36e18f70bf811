/**
 * What a Salesforce error means for the write-back.
 *
 * Per record (a SaveResult's `statusCode`, a failed result's `sf__Error`): transient codes are tried again next
 * night (a row locked by another transaction, a request that timed out, a server error); every other code is
 * permanent until the record changes (deleted, a validation rule, a field the user may not edit, a bad value).
 *
 * Per call (jsforce's `errorCode`, or a socket error's `code`): `pause` (5xx, 429, the daily or concurrent request
 * limit, a cut connection: the write-back waits and tries again), `auth` (the session is refused and could not be
 * refreshed), or `refused` (the call as a whole is wrong; asking again would be refused again).
 */

/** Sources: Salesforce's API status codes and error codes (REST API Developer Guide, "StatusCode" of the SOAP API). */
export const TRANSIENT_RECORD_CODES = new Set([
  'UNABLE_TO_LOCK_ROW',
  'REQUEST_RUNNING_TOO_LONG',
  'QUERY_TIMEOUT',
  'SERVER_UNAVAILABLE',
  'UNKNOWN_EXCEPTION',
  'TXN_SECURITY_END_A_SESSION',
  'CANNOT_EXECUTE_FLOW_TRIGGER',
]);

export function isTransientRecordCode(code: string): boolean {
  return TRANSIENT_RECORD_CODES.has(code);
}

export type CallErrorKind = 'pause' | 'auth' | 'refused';

const PAUSE_CODES = new Set([
  'SERVER_UNAVAILABLE',
  'UNKNOWN_EXCEPTION',
  'REQUEST_LIMIT_EXCEEDED',
  'REQUEST_RUNNING_TOO_LONG',
]);
const AUTH_CODES = new Set([
  'INVALID_SESSION_ID',
  'INVALID_AUTH_HEADER',
  'invalid_grant',
  'invalid_client_id',
  'invalid_client',
]);
const SOCKET_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);

/** The error's Salesforce code (`errorCode`, jsforce's error `name`), or a socket error's `code`. */
export function callErrorCode(error: unknown): string {
  const e = error as { errorCode?: unknown; code?: unknown; name?: unknown; cause?: { code?: unknown } };
  if (typeof e?.errorCode === 'string') return e.errorCode;
  if (typeof e?.cause?.code === 'string') return e.cause.code;
  if (typeof e?.code === 'string') return e.code;
  return typeof e?.name === 'string' ? e.name : 'UNKNOWN';
}

export function classifyCallError(error: unknown): CallErrorKind {
  const code = callErrorCode(error);
  const message = error instanceof Error ? error.message : '';
  if (AUTH_CODES.has(code) || message.startsWith('Unable to refresh session')) return 'auth';
  if (PAUSE_CODES.has(code) || SOCKET_CODES.has(code) || /^ERROR_HTTP_(5\d\d|429)$/.test(code)) return 'pause';
  if (/fetch failed|socket hang up|terminated|other side closed/i.test(message)) return 'pause';
  // jsforce tries a cut upload again itself with the stream it already read: the upload never arrived whole.
  if (/body object should not be disturbed or locked/i.test(message)) return 'pause';
  return 'refused';
}
