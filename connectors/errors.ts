/**
 * Every failure the kit classifies, and its rules, in one place. Each error carries its rule as data:
 *
 * - `retryable`: trying the same step again can succeed (Temporal retries the activity);
 * - `fatal`: the failure ends the whole job, since every other batch would fail alike (a wrong key, a spent
 *   balance, a bucket that does not exist, an input that cannot be read);
 * - `perRecord`: the call was refused for what it asked (a bad domain), so its inputs become error records and the
 *   job goes on.
 *
 * | class                      | when                                                        | retryable | fatal |
 * |----------------------------|-------------------------------------------------------------|-----------|-------|
 * | `ValidationError`          | 400, 422, and limits checked before sending (`status` 0)   | no        | no    |
 * | `AuthenticationError`      | 401, 403                                                    | no        | yes   |
 * | `InsufficientCreditsError` | 402                                                         | no        | yes   |
 * | `NotFoundError`            | 404, 410 (an expired download link, `code` `gone`)          | no        | no    |
 * | `RateLimitedError`         | 429, with `retryAfterMs` from `Retry-After`                 | yes       | no    |
 * | `ServerError`              | 5xx                                                         | yes       | no    |
 * | `NetworkError`             | timeouts, refused/reset connections, a 2xx body that is not  | yes       | no    |
 * |                            | complete JSON (`code` `malformed_body`), a cut-off download  |           |       |
 * | `UnexpectedResponseError`  | complete JSON that does not have the documented shape       | no        | no    |
 * | `SignalApiError` itself    | any other status (405, 409, 413, ...)                       | no        | no    |
 * | `StorageError` and kin     | a storage call failed (outage, missing object)              | yes       | no    |
 * | `BucketNotFoundError`, `InvalidStorageUrlError`, `StorageConfigError` | storage that cannot work | no | yes |
 * | `StorageRefusedError`      | the storage refuses the write: no space (`ENOSPC`), quota   | no        | yes   |
 * |                            | (`EDQUOT`), read-only, access denied (a person must act)    |           |       |
 * | `InputError`, `CsvInputError`, `InflatedPastError` | an input the job cannot read or accept (`InflatedPastError`: a compressed one far out of proportion) | no | yes |
 * | `CorruptDownloadError`     | a downloaded JSONL line that is not one JSON object         | yes       | no    |
 * | `ManifestError`, `PartChecksumError` | `load`: a manifest it cannot use, a part whose bytes are not |no| yes |
 * |                            | the ones its manifest's sha256 names                        |           |       |
 * | `ManifestPlaceError`       | a manifest outside its own job's or run's folder, or naming | no        | yes   |
 * |                            | a part outside it (every reader of a manifest)              |           |       |
 * | `DatabaseError`            | `load`: PostgreSQL refused a statement or the connection    | connection| yes   |
 * |                            | (SQLSTATE, table and part named)                            | lost only |       |
 * | `ColumnError`, `JsonlSyntaxError` | an input header with no usable column, a JSONL line that is not JSON | no | yes |
 * | `DestinationBlockedError`  | a webhook destination resolving to an address not allowlisted | no      | no    |
 * | `DestinationUnresolvableError` | a webhook destination whose host does not resolve      | yes       | no    |
 * | `RateLimiterUnavailableError` | the account's rate limiter does not answer               | yes       | no    |
 * | `CrmAuthError`             | a CRM refused the kit's credentials (expired, revoked, wrong | no        | yes   |
 * |                            | key), or they could not be refreshed                        |           |       |
 * | `CrmUnavailableError`      | a CRM still down or limiting after the write-back's own     | yes       | no    |
 * |                            | pauses (5xx, 429, daily limit, cut connections)              |           |       |
 * | `CrmRequestError`          | a CRM refused a write-back call as a whole (an unknown       | no        | no    |
 * |                            | field or object, a job it failed)                           |           |       |
 *
 * Found outside any activity, so no job and no Temporal retry sees them; their rule says whether the same thing
 * tried again can succeed: `ConfigError` (and `TemporalUnreachableError`, `TemporalOutageError`, `UnsafeSpoolError`),
 * `UsageError`, `WebhookConfigError`, `PushRunInProgressError`, `SyncRunInProgressError`, `PayloadDecryptionError` (the payload codec),
 * `WebhookVerificationError` and the receiver's `Rejection`: no; `NoWorkerError` (nothing was sent) and the
 * receiver's `ClientGone`: yes.
 *
 * Failures raised as `ApplicationFailure` by name rather than by class (webhook deliveries, the export's outcome,
 * a failed job) take their type from the same `FAILURE_TYPE` table, so a workflow, a CLI command and a test name
 * one failure one way:
 *
 * | type                        | raised by                                  | retried by Temporal            |
 * |-----------------------------|--------------------------------------------|--------------------------------|
 * | `DestinationNotConfigured`  | a webhook or collector activity            | no                             |
 * | `DestinationBlocked`        | an endpoint the allowlist or IP rules refuse | no                           |
 * | `DestinationGone`           | an endpoint that answered 410              | no                             |
 * | `DeliveryTimeout`, `DeliveryFailed` | one delivery attempt               | by the delivery workflow's schedule |
 * | `WebhookApiError`           | a refused subscription call                | no                             |
 * | `ExportOutcomeUnknown`      | an export submit whose answer was lost     | no (`--resubmit` decides)      |
 * | `DownloadLinkExpired`       | an export download whose link is stale     | no (the workflow fetches a fresh link) |
 * | `JobFailed`                 | a job workflow whose run failed            | no                             |
 *
 * Workers turn these into Temporal failures in one place (workers/activity-failures.ts); workflows read the failure
 * types from `FAILURE_TYPE` and `FATAL_FAILURE_TYPES` below. This module imports nothing, so workflows may use it.
 *
 * A 2xx answer whose body is cut off or is not JSON is treated as an interrupted transfer: a `NetworkError`
 * (retryable), because the bytes never arrived whole; the service does not charge a response it did not finish.
 * Messages never contain the API key.
 */

/** The failure types that reach Temporal (`ApplicationFailure.type`), by rule. */
export const FAILURE_TYPE = {
  rateLimited: 'RateLimited',
  server: 'ServerError',
  network: 'NetworkError',
  authentication: 'AuthenticationError',
  insufficientCredits: 'InsufficientCreditsError',
  validation: 'ValidationError',
  notFound: 'NotFoundError',
  unexpectedResponse: 'UnexpectedResponseError',
  apiRefused: 'SignalApiError',
  storage: 'StorageError',
  storageConfig: 'StorageConfigError',
  storageRefused: 'StorageRefusedError',
  crmPreflight: 'CrmPreflightError',
  crmLedger: 'CrmLedgerError',
  input: 'InputError',
  corruptDownload: 'CorruptDownload',
  destinationNotConfigured: 'DestinationNotConfigured',
  destinationBlocked: 'DestinationBlocked',
  destinationGone: 'DestinationGone',
  deliveryTimeout: 'DeliveryTimeout',
  deliveryFailed: 'DeliveryFailed',
  webhookApi: 'WebhookApiError',
  exportOutcomeUnknown: 'ExportOutcomeUnknown',
  downloadLinkExpired: 'DownloadLinkExpired',
  jobFailed: 'JobFailed',
  database: 'DatabaseError',
  rateLimiterUnavailable: 'RateLimiterUnavailableError',
  catalogApi: 'CatalogApiError',
  destinationUnresolvable: 'DestinationUnresolvable',
  crmAuth: 'CrmAuthError',
  crmUnavailable: 'CrmUnavailableError',
  crmRequest: 'CrmRequestError',
  config: 'ConfigError',
  usage: 'UsageError',
  pushRunInProgress: 'PushRunInProgressError',
  syncRunInProgress: 'SyncRunInProgressError',
  webhookConfig: 'WebhookConfigError',
  noWorker: 'NoWorkerError',
  payloadDecryption: 'PayloadDecryptionError',
  webhookVerification: 'WebhookVerificationError',
  rejection: 'Rejection',
  clientGone: 'ClientGone',
} as const;

export type FailureType = (typeof FAILURE_TYPE)[keyof typeof FAILURE_TYPE];

export interface FailureRule {
  readonly type: FailureType;
  readonly retryable: boolean;
  readonly fatal: boolean;
  readonly perRecord?: boolean;
}

const rule = (type: FailureType, retryable: boolean, fatal: boolean, perRecord = false): FailureRule => ({
  type,
  retryable,
  fatal,
  perRecord,
});

/** The rule of each failure class. */
export const FAILURE_RULES = {
  rateLimited: rule(FAILURE_TYPE.rateLimited, true, false),
  server: rule(FAILURE_TYPE.server, true, false),
  network: rule(FAILURE_TYPE.network, true, false),
  authentication: rule(FAILURE_TYPE.authentication, false, true),
  insufficientCredits: rule(FAILURE_TYPE.insufficientCredits, false, true),
  validation: rule(FAILURE_TYPE.validation, false, false, true),
  notFound: rule(FAILURE_TYPE.notFound, false, false, true),
  unexpectedResponse: rule(FAILURE_TYPE.unexpectedResponse, false, false),
  apiRefused: rule(FAILURE_TYPE.apiRefused, false, false),
  storage: rule(FAILURE_TYPE.storage, true, false),
  storageConfig: rule(FAILURE_TYPE.storageConfig, false, true),
  storageRefused: rule(FAILURE_TYPE.storageRefused, false, true),
  /** The CRM's schema or the token's scopes refuse the write-back: nothing is written until the user fixes them. */
  crmPreflight: rule(FAILURE_TYPE.crmPreflight, false, true),
  /** The write-back ledger does not prove itself or lies outside its schedule's folder: never trusted, never guessed. */
  crmLedger: rule(FAILURE_TYPE.crmLedger, false, true),
  input: rule(FAILURE_TYPE.input, false, true),
  corruptDownload: rule(FAILURE_TYPE.corruptDownload, true, false),
  destinationNotConfigured: rule(FAILURE_TYPE.destinationNotConfigured, false, false),
  destinationBlocked: rule(FAILURE_TYPE.destinationBlocked, false, false),
  destinationGone: rule(FAILURE_TYPE.destinationGone, false, false),
  deliveryTimeout: rule(FAILURE_TYPE.deliveryTimeout, true, false),
  deliveryFailed: rule(FAILURE_TYPE.deliveryFailed, true, false),
  webhookApi: rule(FAILURE_TYPE.webhookApi, false, false),
  exportOutcomeUnknown: rule(FAILURE_TYPE.exportOutcomeUnknown, false, false),
  downloadLinkExpired: rule(FAILURE_TYPE.downloadLinkExpired, false, false),
  jobFailed: rule(FAILURE_TYPE.jobFailed, false, false),
  database: rule(FAILURE_TYPE.database, false, true),
  /** The account's rate limiter does not answer: retried, it may be back (a worker that can run it started). */
  rateLimiterUnavailable: rule(FAILURE_TYPE.rateLimiterUnavailable, true, false),
  /** The service refused a catalog look-up (topics, signal types): asking again would be refused again. */
  catalogApi: rule(FAILURE_TYPE.catalogApi, false, false),
  /** A webhook destination's host does not resolve (DNS may be down or late): the next attempt may reach it. */
  destinationUnresolvable: rule(FAILURE_TYPE.destinationUnresolvable, true, false),
  /** A CRM refused the kit's credentials: every other call would be refused alike until a person fixes them. */
  crmAuth: rule(FAILURE_TYPE.crmAuth, false, true),
  /** A CRM stayed down or kept limiting through the write-back's pauses: the same write later can succeed. */
  crmUnavailable: rule(FAILURE_TYPE.crmUnavailable, true, false),
  /** A CRM refused a call as a whole: asking the same again would be refused again. */
  crmRequest: rule(FAILURE_TYPE.crmRequest, false, false),
  /**
   * The failures below are found outside any activity (before anything starts, in the command, in the receiver, in
   * the payload codec), so no job sees them; their rule says whether trying the same thing again can succeed.
   */
  config: rule(FAILURE_TYPE.config, false, false),
  usage: rule(FAILURE_TYPE.usage, false, false),
  pushRunInProgress: rule(FAILURE_TYPE.pushRunInProgress, false, false),
  syncRunInProgress: rule(FAILURE_TYPE.syncRunInProgress, false, false),
  webhookConfig: rule(FAILURE_TYPE.webhookConfig, false, false),
  /** No worker took a one-call command's call: nothing was sent, so the same call can succeed once one polls. */
  noWorker: rule(FAILURE_TYPE.noWorker, true, false),
  payloadDecryption: rule(FAILURE_TYPE.payloadDecryption, false, false),
  webhookVerification: rule(FAILURE_TYPE.webhookVerification, false, false),
  rejection: rule(FAILURE_TYPE.rejection, false, false),
  /** The sender went away mid-body: nothing was enqueued, and its own retry can succeed. */
  clientGone: rule(FAILURE_TYPE.clientGone, true, false),
} satisfies Record<keyof typeof FAILURE_TYPE, FailureRule>;

/** Failure types that end the whole job (workflows stop scheduling batches on them). */
export const FATAL_FAILURE_TYPES: readonly string[] = Object.values(FAILURE_RULES)
  .filter((r) => r.fatal)
  .map((r) => r.type);

/** Every classified error of the kit: its rule is data on the instance, read by the worker's activity interceptor. */
export abstract class KitError extends Error {
  abstract readonly rule: FailureRule;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
  }
  get retryable(): boolean {
    return this.rule.retryable;
  }
  get fatal(): boolean {
    return this.rule.fatal;
  }
}

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

export class SignalApiError extends KitError {
  readonly rule: FailureRule = FAILURE_RULES.apiRefused;
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
  /** The server's `Retry-After` in milliseconds, when it sent one (429, 503). */
  readonly retryAfterMs: number | undefined;
  /**
   * Credits the service says this failed call charged (`x-credits-charged` on the failed answer); undefined when
   * no answer said (a reset, a timeout, a gateway's page without the header): then the cost is unknown.
   */
  readonly creditsCharged: number | undefined;
  /** The JSON body of an answer that did not have the documented shape (`UnexpectedResponseError`). */
  readonly body: unknown;

  constructor(init: SignalApiErrorInit) {
    super(init.message, init);
    this.status = init.status;
    this.code = init.code;
    this.requestId = init.requestId;
    this.field = init.field;
    this.method = init.method;
    this.path = init.path;
    this.retryAfterMs = init.retryAfterMs;
    this.creditsCharged = init.creditsCharged;
    this.body = init.body;
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

/** A `SignalApiError` class that differs from it only in its rule (stripe-node's one-line subclasses). */
function apiErrorWithRule(rule: FailureRule): typeof SignalApiError {
  return class extends SignalApiError {
    override readonly rule = rule;
  };
}

/** 400 or 422 from the server, or a limit checked by the client before sending (then `status` is 0). */
export class ValidationError extends apiErrorWithRule(FAILURE_RULES.validation) {}
/** 401 (missing or unknown key) or 403 (forbidden, or a bad download-link signature). */
export class AuthenticationError extends apiErrorWithRule(FAILURE_RULES.authentication) {}
/** 402: the account's balance does not cover the call; nothing was charged. */
export class InsufficientCreditsError extends apiErrorWithRule(FAILURE_RULES.insufficientCredits) {}
/** 404, or 410 for an expired signed download link (`code` `gone`). */
export class NotFoundError extends apiErrorWithRule(FAILURE_RULES.notFound) {}
/** 429. `retryAfterMs` is the server's `Retry-After` (seconds or an HTTP date) in milliseconds, when sent. */
export class RateLimitedError extends apiErrorWithRule(FAILURE_RULES.rateLimited) {}
/** 5xx. `retryAfterMs` is set when a 503 carried `Retry-After`. */
export class ServerError extends apiErrorWithRule(FAILURE_RULES.server) {}
/** A complete JSON body that does not have the documented shape. Retrying the same call will not help. */
export class UnexpectedResponseError extends apiErrorWithRule(FAILURE_RULES.unexpectedResponse) {}

/**
 * No usable answer: a timeout, a refused or reset connection, a 2xx body cut off or not JSON
 * (`malformed_body`), a download shorter than its `Content-Length` (`truncated_body`).
 * `status` is the HTTP status when headers had arrived, else 0.
 */
export class NetworkError extends apiErrorWithRule(FAILURE_RULES.network) {
  /** An answer over the size cap (`answer_too_large`) will be over it again. */
  override get retryable(): boolean {
    return this.code !== 'answer_too_large';
  }
  /** True when the request provably never reached the server (refused connection, DNS, connect timeout). */
  get notSent(): boolean {
    return NOT_SENT_CODES.has(this.code);
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
 * Whether a failure is worth retrying, by its rule. Raw socket errors (ECONNRESET, undici socket and timeout errors)
 * that did not pass through the client also count as retryable.
 */
export function isRetryable(err: unknown): boolean {
  if (err instanceof KitError) return err.retryable;
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    return typeof code === 'string' && RETRYABLE_SYSTEM_CODES.has(code);
  }
  return false;
}

/**
 * Whether a failed call provably cost nothing, so that sending it again cannot pay twice: its answer said it charged
 * 0, the request never reached the service, the client refused it before sending (`status` 0), or the service
 * refused it (a 4xx, 429 included: refusals come before any work, and the service charges only work it did).
 */
export function chargedNothing(err: unknown): boolean {
  if (!(err instanceof SignalApiError)) return false;
  if (err.creditsCharged === 0) return true;
  if (err instanceof NetworkError) return err.notSent;
  return err.status === 0 || (err.status >= 400 && err.status < 500);
}

/** The delay the server asked for before the next attempt (`Retry-After`), when it asked for one. */
export function retryAfterMsOf(err: unknown): number | undefined {
  return err instanceof SignalApiError ? err.retryAfterMs : undefined;
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

/** Every storage failure: names the store URL and the key (when there is one) and keeps the backend's error. */
export class StorageError extends KitError {
  readonly rule: FailureRule = FAILURE_RULES.storage;
  readonly url: string;
  readonly key: string | undefined;
  constructor(message: string, details: { url: string; key?: string; cause?: unknown }) {
    const where = details.key !== undefined ? joinUrl(details.url, details.key) : details.url;
    super(`${message} (${where})`, details);
    this.url = details.url;
    this.key = details.key;
  }
}

export class ObjectNotFoundError extends StorageError {
  constructor(details: { url: string; key: string; cause?: unknown }) {
    super('object not found', details);
  }
}

export class BucketNotFoundError extends StorageError {
  override readonly rule = FAILURE_RULES.storageConfig;
  readonly bucket: string;
  constructor(details: { url: string; bucket: string; key?: string; cause?: unknown }) {
    super(`bucket "${details.bucket}" does not exist`, details);
    this.bucket = details.bucket;
  }
}

/**
 * The storage refused the operation for a reason that waiting does not cure: the disk or the quota is full, the
 * file system is read-only, the credentials may not write there. The job stops before its next paid call; `reason`
 * names the cause (`ENOSPC`, `EDQUOT`, `EROFS`, `EACCES`, `AccessDenied`, ...).
 */
export class StorageRefusedError extends StorageError {
  override readonly rule = FAILURE_RULES.storageRefused;
  readonly reason: string;
  constructor(message: string, details: { url: string; key?: string; reason: string; cause?: unknown }) {
    super(message, details);
    this.reason = details.reason;
  }
}

/** Error codes (Node's, S3's, GCS's) of a storage that refuses a write until someone frees space or grants access. */
const REFUSED_CODES = new Set([
  'ENOSPC',
  'EDQUOT',
  'EROFS',
  'EACCES',
  'EPERM',
  'AccessDenied',
  'AllAccessDisabled',
  'InvalidAccessKeyId',
  'SignatureDoesNotMatch',
  'QuotaExceeded',
  'EntityTooLarge',
]);

/** The reason a backend error is a refusal no retry can fix, or undefined when it may pass. */
export function refusalReason(cause: unknown): string | undefined {
  const err = cause as { code?: unknown; name?: unknown; Code?: unknown; $metadata?: { httpStatusCode?: number } };
  for (const candidate of [err?.code, err?.name, err?.Code]) {
    if (typeof candidate === 'string' && REFUSED_CODES.has(candidate)) return candidate;
  }
  // GCS (and S3 without a code) say it with the status: 403 is a refusal of these credentials.
  if (err?.code === 403 || err?.$metadata?.httpStatusCode === 403) return 'AccessDenied';
  return undefined;
}

/** The write was aborted by its caller (or its source failed); nothing was published. */
export class WriteAbortedError extends StorageError {
  constructor(details: { url: string; key: string; cause?: unknown }) {
    const reason = details.cause instanceof Error ? `: ${details.cause.message}` : '';
    super(`write aborted, nothing published${reason}`, details);
  }
}

export class InvalidStorageUrlError extends KitError {
  readonly rule = FAILURE_RULES.storageConfig;
  readonly input: string;
  constructor(input: string, reason: string) {
    super(`invalid storage URL "${input}": ${reason}`);
    this.input = input;
  }
}

/** A storage setting that cannot work (named by its variable); fixing the configuration is the only cure. */
export class StorageConfigError extends KitError {
  readonly rule = FAILURE_RULES.storageConfig;
}

export function joinUrl(base: string, key: string): string {
  return base.endsWith('/') ? base + key : `${base}/${key}`;
}

/** One thing the CRM's schema or the token lacks for a write-back, with its fix. */
export interface CrmProblem {
  /** The field (its CRM name) or the scope or the object in question. */
  what: string;
  problem: string;
  fix: string;
}

/**
 * A write-back the CRM would refuse: a missing or mistyped field, a read-only one, a token without the scope, a wrong
 * object. Raised before any paid call and at `schedule create`; the command exits 2 naming each problem and its fix.
 */
export class CrmPreflightError extends KitError {
  readonly rule = FAILURE_RULES.crmPreflight;
  readonly crm: string;
  readonly problems: readonly CrmProblem[];
  constructor(crm: string, object: string, problems: readonly CrmProblem[]) {
    const lines = problems.map((p) => `  ${p.what}: ${p.problem}; fix: ${p.fix}`);
    super(`${crm} ${object} cannot take the write-back:\n${lines.join('\n')}`);
    this.crm = crm;
    this.problems = problems;
  }
}

/** The write-back ledger at `key` does not prove itself (its checksum, its schedule): the write-back stops. */
export class CrmLedgerError extends KitError {
  readonly rule = FAILURE_RULES.crmLedger;
  readonly key: string;
  constructor(key: string, reason: string) {
    super(`write-back ledger ${key}: ${reason}`);
    this.key = key;
  }
}

/** A problem with the job's input or its options that no retry can fix. */
export class InputError extends KitError {
  readonly rule = FAILURE_RULES.input;
}

/** A downloaded JSONL body that is not what it should be (a line that is not one JSON object); a new download may help. */
export class CorruptDownloadError extends KitError {
  readonly rule = FAILURE_RULES.corruptDownload;
}

/**
 * A compressed input (a `.gz` export, a workbook's zip) that inflates past its limit, a stated multiple of its stored
 * size: refused by name before any of its rows is read, so before anything is paid for.
 */
export class InflatedPastError extends InputError {
  readonly limit: number;
  constructor(message: string, limit: number) {
    super(message);
    this.limit = limit;
  }
}

/** A CSV input the parser cannot read past (an unclosed quote spanning lines, a runaway record). */
export class CsvInputError extends InputError {
  readonly line: number | undefined;
  constructor(message: string, line: number | undefined, options?: { cause?: unknown }) {
    super(line !== undefined ? `CSV line ${line}: ${message}` : `CSV: ${message}`, options);
    this.line = line;
  }
}

/** A manifest `load` cannot use: not JSON, not a job's or a push run's, or without a field it needs (named). */
export class ManifestError extends InputError {
  readonly url: string;
  constructor(url: string, message: string, options?: { cause?: unknown }) {
    super(`manifest ${url}: ${message}`, options);
    this.url = url;
  }
}

/**
 * A manifest whose place disagrees with what it says (it lies outside the folder of the job or run it names, its
 * `output` is not the folder it lies under) or that names a part outside its own folder. Names the field, never a
 * byte or a hash of what the field points at.
 */
export class ManifestPlaceError extends ManifestError {
  readonly field: string;
  /** The message without the manifest's URL: `field "<field>": <what disagrees>`. */
  readonly reason: string;
  constructor(url: string, field: string, message: string) {
    super(url, `field "${field}": ${message}`);
    this.field = field;
    this.reason = `field "${field}": ${message}`;
  }
}

/**
 * A part whose size or sha256 is not what its manifest lists: nothing is loaded. The message names the part and what
 * differs, never the bytes' own hash or content (a planted manifest must not make the loader an oracle of a file).
 */
export class PartChecksumError extends InputError {
  readonly key: string;
  readonly expected: string;
  constructor(details: { url: string; key: string; expected: string; differs: 'size' | 'sha256' }) {
    super(
      `part ${details.key} does not match its manifest (its ${details.differs === 'size' ? 'size' : 'sha256'} differs ` +
        `from the manifest's); nothing was loaded (${joinUrl(details.url, details.key)})`,
    );
    this.key = details.key;
    this.expected = details.expected;
  }
}

/** SQLSTATE classes of a lost or refused connection, an admin shutdown or a serialization conflict: worth a retry. */
const TRANSIENT_SQLSTATE = /^(08|40|53|57P)/;

/**
 * PostgreSQL refused a statement or could not be reached: `code` is the SQLSTATE (empty when no server answered), with
 * the table, constraint and the part being loaded when known.
 */
export class DatabaseError extends KitError {
  readonly rule = FAILURE_RULES.database;
  readonly code: string;
  readonly table: string | undefined;
  readonly constraint: string | undefined;
  readonly part: string | undefined;
  constructor(
    message: string,
    details: { code?: string; table?: string; constraint?: string; part?: string; cause?: unknown },
  ) {
    const context = [
      details.code ? `SQLSTATE ${details.code}` : undefined,
      details.table ? `table ${details.table}` : undefined,
      details.constraint ? `constraint ${details.constraint}` : undefined,
      details.part ? `part ${details.part}` : undefined,
    ].filter(Boolean);
    super(context.length ? `${message} (${context.join(', ')})` : message, details);
    this.code = details.code ?? '';
    this.table = details.table;
    this.constraint = details.constraint;
    this.part = details.part;
  }
  override get retryable(): boolean {
    return this.code === '' || TRANSIENT_SQLSTATE.test(this.code);
  }
}

/** A `KitError` class that differs from it only in its rule; its name is its own class's (set by `KitError`). */
function kitErrorWithRule(rule: FailureRule) {
  return class extends KitError {
    readonly rule = rule;
  };
}

/**
 * A caller's mistake in what it asked (a flag, a schedule's name or settings), named by its field: never retried, the
 * command exits with code 2.
 */
export class UsageError extends kitErrorWithRule(FAILURE_RULES.usage) {}

/**
 * A schedule's name that is not one (a path separator, `..`, too long, upper-case): it names a folder of the output and
 * a Temporal schedule id, so the library refuses it before either is touched, naming the field it came in.
 */
export class ScheduleNameError extends UsageError {
  readonly field: string;
  constructor(field: string, value: unknown, rule: string) {
    const shown =
      typeof value === 'string' ? JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value) : typeof value;
    super(`${field} must be ${rule}, got ${shown}`);
    this.field = field;
  }
}

/**
 * A run of the schedule is in progress, so another one now would read the same watermarks (or state), fetch the same
 * new signals again and pay for them twice. Not retried: the caller waits for that run to finish.
 */
export class PushRunInProgressError extends KitError {
  readonly rule = FAILURE_RULES.pushRunInProgress;
  readonly push: string;
  readonly running: readonly string[];
  constructor(push: string, running: readonly string[]) {
    super(
      `a run of push "${push}" is in progress (${running.join(', ')}): wait for it to finish ` +
        `(temporal workflow result --workflow-id ${running[0]}), then run again`,
    );
    this.push = push;
    this.running = running;
  }
}

/**
 * A night of the CRM sync is in progress, so another one now would read the same state and export, ask the same
 * companies again and pay for their signals twice. Not retried: the caller waits for that night to finish.
 */
export class SyncRunInProgressError extends KitError {
  readonly rule = FAILURE_RULES.syncRunInProgress;
  readonly sync: string;
  readonly running: readonly string[];
  constructor(sync: string, running: readonly string[]) {
    super(
      `a night of CRM sync "${sync}" is in progress (${running.join(', ')}): wait for it to finish ` +
        `(temporal workflow result --workflow-id ${running[0]}), then run again`,
    );
    this.sync = sync;
    this.running = running;
  }
}

/** API calls cannot get a slot: the account's rate limiter does not answer; the message says why when it can. */
export class RateLimiterUnavailableError extends KitError {
  readonly rule = FAILURE_RULES.rateLimiterUnavailable;
  constructor(workflowId: string, why: string, options?: { cause?: unknown }) {
    super(`the account's rate limiter (workflow ${workflowId}) does not answer: ${why}`, options);
  }
}

/** The worker's webhook destinations are misconfigured (the message names the destination's field). Not retried. */
export class WebhookConfigError extends kitErrorWithRule(FAILURE_RULES.webhookConfig) {}

/** A configuration problem, named by its setting, found before anything starts (the CLI exits 2). */
export class ConfigError extends KitError {
  readonly rule: FailureRule = FAILURE_RULES.config;
}

/**
 * Temporal did not answer at the configured address. A configuration error too: the fix is almost always the
 * address, the TLS settings or the profile, so the message names the setting that chose the address.
 */
export class TemporalUnreachableError extends ConfigError {
  readonly address: string;
  readonly source: string;
  constructor(address: string, source: string, cause: unknown) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    super(`cannot reach Temporal at ${address} (set by ${source}): ${reason}`, { cause });
    this.address = address;
    this.source = source;
  }
}

/** Temporal stayed unreachable past the limit while a job was followed (exit 2, like any unreachable Temporal). */
export class TemporalOutageError extends ConfigError {
  constructor(workflowId: string, outageMs: number, cause: unknown) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    super(
      `Temporal has been unreachable for ${Math.round(outageMs / 1000)} s while following ${workflowId} (${reason}); ` +
        `the job itself goes on once the server is back: \`signal-kit status ${workflowId}\` tells how it ends`,
      { cause },
    );
  }
}

/**
 * The worker's spool directory (where paid answers the output refused wait for a re-run) is not the worker's alone:
 * another user owns it, others may write to it, or it is a symbolic link. The worker does not start; `fix` says what
 * to run (or which setting to change).
 */
export class UnsafeSpoolError extends ConfigError {
  readonly path: string;
  readonly fix: string;
  constructor(path: string, problem: string, fix: string) {
    super(`the spool directory ${path} ${problem}: ${fix} (or set SIGNAL_KIT_SPOOL_DIR to a directory of your own)`);
    this.path = path;
    this.fix = fix;
  }
}

/** No worker took a one-call command's call (`webhooks list`, `topics search`): nothing was sent to the service. */
export class NoWorkerError extends kitErrorWithRule(FAILURE_RULES.noWorker) {}

/** A header that cannot serve the request: no usable identifier column, or a named column the file lacks. */
export class ColumnError extends KitError {
  readonly rule = FAILURE_RULES.input;
  readonly columns: string[];
  constructor(message: string, columns: string[]) {
    super(message);
    this.columns = columns;
  }
}

/** A JSONL line that is not JSON, named by its line; the start of the line is shown, never a runaway one whole. */
export class JsonlSyntaxError extends KitError {
  readonly rule = FAILURE_RULES.input;
  readonly line: number;
  readonly raw: string;
  constructor(line: number, reason: string, raw: string) {
    super(`line ${line} is not valid JSON (${reason}): ${raw.length > 200 ? `${raw.slice(0, 200)}…` : raw}`);
    this.line = line;
    this.raw = raw;
  }
}

export type WebhookVerificationReason =
  | 'missing_headers'
  | 'invalid_timestamp'
  | 'timestamp_too_old'
  | 'timestamp_too_new'
  | 'invalid_signature_format'
  | 'no_matching_signature';

/** Thrown by `verifyWebhook`; `reason` says which check failed. */
export class WebhookVerificationError extends KitError {
  readonly rule = FAILURE_RULES.webhookVerification;
  readonly reason: WebhookVerificationReason;
  constructor(reason: WebhookVerificationReason, message: string) {
    super(message);
    this.reason = reason;
  }
}

/** Thrown (before any socket is opened) when a destination resolves to an address we refuse to reach. */
export class DestinationBlockedError extends KitError {
  readonly rule = FAILURE_RULES.destinationBlocked;
  readonly code = 'DESTINATION_BLOCKED';
  readonly host: string;
  readonly address: string;
  /** Which blocked range matched, e.g. `private (10.0.0.0/8)`. */
  readonly range: string;
  constructor(host: string, address: string, range: string) {
    super(`destination ${host} resolves to ${address}, a ${range} address, which is not allowlisted`);
    this.host = host;
    this.address = address;
    this.range = range;
  }
}

/** A payload the codec cannot open: unknown key id, data altered since it was sealed, or not sealed at all. */
export class PayloadDecryptionError extends kitErrorWithRule(FAILURE_RULES.payloadDecryption) {}

/** Thrown when the host does not resolve at all. */
export class DestinationUnresolvableError extends KitError {
  readonly rule = FAILURE_RULES.destinationUnresolvable;
  readonly code = 'DESTINATION_UNRESOLVABLE';
  readonly host: string;
  constructor(host: string, cause?: unknown) {
    super(`destination ${host} does not resolve`, { cause });
    this.host = host;
  }
}

/** The webhook receiver's refusal of a request: its status, the `error` its answer body holds, extra headers. */
export class Rejection extends KitError {
  readonly rule = FAILURE_RULES.rejection;
  readonly status: number;
  readonly error: { code: string; message: string; field?: string };
  readonly headers: Record<string, string>;
  constructor(status: number, code: string, message: string, field?: string, headers: Record<string, string> = {}) {
    super(message);
    this.status = status;
    this.error = field === undefined ? { code, message } : { code, message, field };
    this.headers = headers;
  }
}

/** The client went away before its request was complete: nothing to answer, nothing worth a stack trace. */
export class ClientGone extends KitError {
  readonly rule = FAILURE_RULES.clientGone;
  constructor() {
    super('client closed the connection before the body was complete');
  }
}

/**
 * A CRM refused the kit's credentials (an expired access token with nothing to refresh it, a key the connected app
 * does not know, a revoked private-app token). The message names the setting to fix, never the token or the key.
 */
export class CrmAuthError extends KitError {
  readonly rule = FAILURE_RULES.crmAuth;
  readonly crm: string;
  readonly code: string;
  constructor(crm: string, code: string, message: string, options?: { cause?: unknown }) {
    super(`${crm}: ${code}: ${message}`, options);
    this.crm = crm;
    this.code = code;
  }
}

/** A CRM still down, or still limiting, after the write-back paused for it as long as it would (`code`: the CRM's). */
export class CrmUnavailableError extends KitError {
  readonly rule = FAILURE_RULES.crmUnavailable;
  readonly crm: string;
  readonly code: string;
  constructor(crm: string, code: string, message: string, options?: { cause?: unknown }) {
    super(`${crm}: ${code}: ${message}`, options);
    this.crm = crm;
    this.code = code;
  }
}

/** A CRM refused a write-back call as a whole (`code`: the CRM's own, `INVALID_FIELD`, a failed job's message). */
export class CrmRequestError extends KitError {
  readonly rule = FAILURE_RULES.crmRequest;
  readonly crm: string;
  readonly code: string;
  constructor(crm: string, code: string, message: string, options?: { cause?: unknown }) {
    super(`${crm}: ${code}: ${message}`, options);
    this.crm = crm;
    this.code = code;
  }
}
