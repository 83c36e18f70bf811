/**
 * Public types of the Signal Data Service client: its options, request arguments, and results. A result is an
 * answer's normalized shape, derived from its schema in `schemas.ts` (which says what normalized means), plus
 * `credits` (from `x-credits-charged`, 0 when absent) and `requestId` (from `x-request-id`, when sent).
 * Field names are the spec's (snake_case), so the spec doubles as the reference.
 */
import type { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import type * as schema from './schemas.ts';

// ─── client options ────────────────────────────────────────────────────────────────────────────────────────────

export interface RetryOptions {
  /** Attempts in total, the first included (default 4). */
  maxAttempts: number;
  /** Backoff base: attempt n waits a random time in [0, min(maxDelayMs, baseDelayMs * 2^(n-1))] (default 250). */
  baseDelayMs: number;
  /** Backoff cap (default 8000). A server's `Retry-After` is honoured even when longer. */
  maxDelayMs: number;
  /** A `Retry-After` longer than this is not waited for: the error is thrown at once (default MAX_RETRY_AFTER_MS). */
  maxRetryAfterMs?: number;
}

export interface RetryEvent {
  /** The attempt that failed (1 = the first). */
  attempt: number;
  /** How long the client waits before the next attempt. */
  delayMs: number;
  error: Error;
  method: string;
  path: string;
}

export interface SignalClientOptions {
  /** e.g. `https://api.example.com` or the sandbox's `url`. A path prefix is kept (`https://host/prefix`). */
  baseUrl: string;
  apiKey: string;
  /** How the key is sent: `X-API-KEY` header (default) or `Authorization: Bearer`. */
  auth?: 'x-api-key' | 'bearer';
  /** Per attempt: until the whole JSON body is read; for downloads, until the headers and between body chunks. */
  timeoutMs?: number;
  /** Bytes read of one JSON answer at most (default MAX_ANSWER_BYTES); more is a NetworkError `answer_too_large`. */
  maxAnswerBytes?: number;
  /** Retry policy for 429, 5xx and network failures; `false` leaves retries to the caller (Temporal). */
  retry?: false | Partial<RetryOptions>;
  /** Use this undici dispatcher instead of the client's own keep-alive `Agent`; `close()` leaves it open. */
  dispatcher?: Dispatcher;
  /** Called before each retry wait (for logging and tests). Never given the API key. */
  onRetry?: (event: RetryEvent) => void;
  /** Called as each attempt is sent (retries included), for metrics and tracing. Never given the API key. */
  onRequest?: (event: RequestEvent) => void;
  /** Called when each attempt ends: answered (any status) or failed without an answer (`status` 0, `error`). */
  onResponse?: (event: ResponseEvent) => void;
  /** `User-Agent` header (default `signal-kit/<version>`). */
  userAgent?: string;
}

export interface RequestEvent {
  method: string;
  /** The endpoint's path, e.g. `/v1/companies/enrich/bulk`; a download's path without its signed query. */
  path: string;
  /** 1 for the first attempt of a call. */
  attempt: number;
}

export interface ResponseEvent extends RequestEvent {
  /** The HTTP status; 0 when no answer came (timeout, reset, refused). */
  status: number;
  /** From sending the request to reading the whole answer (for a download: to its headers). */
  durationMs: number;
  /** `x-request-id`, when the service sent one. */
  requestId?: string;
  /** `x-credits-charged` of a 2xx answer; 0 otherwise. */
  credits: number;
  /** The typed error of a failed attempt. */
  error?: Error;
}

/** Per-call options, the last argument of every method. */
export interface CallOptions {
  /** Abort the call (the abort reason is rethrown as is). */
  signal?: AbortSignal;
  /** Overrides the client's `timeoutMs` for this call. */
  timeoutMs?: number;
  /** Overrides the client's retry policy for this call. */
  retry?: false | Partial<RetryOptions>;
  /**
   * Called as each attempt is handed to the connection, after any pacing wait: a call aborted before it never
   * reached the service (and cost nothing).
   */
  onSend?: () => void;
  /**
   * Awaited after any pacing wait, just before each attempt is handed to the connection: what must be durable before
   * the service can charge (a paid call's marker). If it throws, the call is not sent. It may be called again for
   * the same attempt: when it held the call past its turn, the call waits for another turn and calls it again.
   */
  beforeSend?: () => Promise<void>;
}

// ─── common ────────────────────────────────────────────────────────────────────────────────────────────────────

/** A `Date` or an ISO 8601 string; sent as ISO 8601 UTC. */
export type DateInput = Date | string;

export interface ResponseMeta {
  /** Credits charged for this call (`x-credits-charged`; 0 when absent). */
  credits: number;
  /** `x-request-id`, when the server sent one. */
  requestId?: string;
  /** `x-credits-remaining`, when the server sent one. */
  creditsRemaining?: number;
}

export type WithMeta<T> = T & ResponseMeta;

// ─── results: the answers' shapes (schemas.ts) with the response headers ──────────────────────────────────────

export type {
  BulkEnrichBody,
  BulkEnrichFailed,
  BulkEnrichItem,
  BulkEnrichNotFound,
  BulkEnrichOk,
  BulkEnrichSummary,
  BulkVerifyError,
  BulkVerifySummary,
  BuyerIntentContact,
  BuyerIntentContactsBody,
  Company,
  CompanyEnrichment,
  CompanySearchBody,
  CompanySearchItem,
  Contact,
  ContactEnrichment,
  ContactSearchBody,
  ContactSearchItem,
  Coverage,
  EmailVerification,
  EmailVerificationDetails,
  IntentCompany,
  IntentContact,
  IntentExport,
  LegacyCompanyEnrichment,
  Signal,
  SignalData,
  SignalTypeInfo,
  SignalTypesBody,
  StatsBody,
  Topic,
  TopicsBody,
  VerifyEmailBody,
  VerifyEmailsBody,
  Webhook,
  WebhookDeleteBody,
  WebhookListBody,
  WebhookTestBody,
} from './schemas.ts';

export type CompanyEnrichResult = WithMeta<schema.CompanyEnrichment>;
/** The legacy form mapped onto the company enrichment result; the original body is kept in `legacy`. */
export type LegacyCompanyEnrichResult = WithMeta<schema.LegacyCompanyEnrichment>;
export type ContactEnrichResult = WithMeta<schema.ContactEnrichment>;
export type BulkEnrichResult = WithMeta<schema.BulkEnrichBody>;
export type CompanySearchResult = WithMeta<schema.CompanySearchBody>;
export type ContactSearchResult = WithMeta<schema.ContactSearchBody>;
export type SignalResult = WithMeta<schema.Signal>;
export type SignalTypesResult = WithMeta<schema.SignalTypesBody>;
export type StatsResult = WithMeta<schema.StatsBody>;
export type BuyerIntentContactsPage = WithMeta<schema.BuyerIntentContactsBody>;
export type TopicsPage = WithMeta<schema.TopicsBody>;
export type IntentExportResult = WithMeta<schema.IntentExport>;
export type VerifyEmailResult = WithMeta<schema.VerifyEmailBody>;
export type VerifyEmailsResult = WithMeta<schema.VerifyEmailsBody>;
export type WebhookResult = WithMeta<schema.Webhook>;
export type WebhookListResult = WithMeta<schema.WebhookListBody>;
export type WebhookDeleteResult = WithMeta<schema.WebhookDeleteBody>;
export type WebhookTestResult = WithMeta<schema.WebhookTestBody>;

// ─── downloads ──────────────────────────────────────────────────────────────────────────────────────────────────

export interface IntentExportDownload {
  /** The JSONL body (one buyer-intent contact per line). Errors with a `NetworkError` if cut off. */
  body: Readable;
  /** The same body as a web `ReadableStream` (consume one or the other). */
  stream(): ReadableStream<Uint8Array>;
  /** Bytes in this response's body, when the server said (`Content-Length`). */
  contentLength?: number;
  contentType?: string;
  /** First byte of the file this body starts at (non-zero only when a `Range` resume was honoured). */
  offset: number;
  /** Whole-file size when known (from `Content-Range` or `Content-Length`). */
  totalLength?: number;
  status: number;
  /** The download is never charged. */
  credits: 0;
  requestId?: string;
}

export interface DownloadOptions extends CallOptions {
  /** Resume from this byte (sends `Range: bytes=<offset>-`); a server that ignores it answers from 0. */
  offset?: number;
}

// ─── request arguments ──────────────────────────────────────────────────────────────────────────────────────────

export interface EnrichCompanyParams {
  domain?: string;
  company_name?: string;
  linkedin_url?: string;
  signal_types?: string[];
  /** At most 25. */
  signal_subtypes?: string[];
  detected_after?: DateInput;
  /** At most 500. */
  limit?: number;
}

export interface EnrichCompanyLegacyParams {
  domain: string;
}

export interface EnrichCompaniesParams {
  /** 1 to 100 domains. */
  domains: string[];
  signal_types?: string[];
  signal_subtypes?: string[];
  detected_after?: DateInput;
  /** Per domain; at most 500. */
  limit?: number;
}

export interface EnrichContactParams {
  contact_email?: string;
  contact_linkedin_url?: string;
  signal_types?: string[];
  detected_after?: DateInput;
  limit?: number;
}

export interface ContentFilters {
  keywords?: string[];
  technologies?: string[];
  competitors?: string[];
  pain_points?: string[];
  initiatives?: string[];
  [key: string]: unknown;
}

export interface SearchCompaniesParams {
  signal_types?: string[];
  detected_after?: DateInput;
  limit?: number;
  industries?: string[];
  employee_count_min?: number;
  employee_count_max?: number;
  content_filters?: ContentFilters;
}

export interface SearchContactsParams {
  signal_types?: string[];
  detected_after?: DateInput;
  seniority?: string[];
  department?: string[];
  job_title?: string;
  limit?: number;
}

export interface BuyerIntentContactsParams {
  /** `b2b_<number>` ids. */
  topic_ids: string[];
  email_validated?: boolean;
  seniority?: string[];
  department?: string[];
  has_email?: boolean;
  has_mobile?: boolean;
  page_size?: number;
  /** `next_cursor` of the previous page. */
  cursor?: string | null;
}

export interface SearchTopicsParams {
  q?: string;
  limit?: number;
  cursor?: string | null;
}

export interface CreateIntentExportParams {
  topic_ids: string[];
  email_validated?: boolean;
  limit?: number;
  seniority?: string[];
  department?: string[];
  has_email?: boolean;
  has_mobile?: boolean;
}

export interface VerifyEmailParams {
  email: string;
}

export interface VerifyEmailsParams {
  /** 1 to 1000 addresses; duplicates are collapsed by the service and charged once. */
  emails: string[];
}

export interface CreateWebhookParams {
  url: string;
  signal_types: string[];
  description?: string;
}

export interface UpdateWebhookParams {
  url?: string;
  signal_types?: string[];
  description?: string;
  status?: 'active' | 'paused';
}

/** Where `downloadIntentExport` reads from: the signed URL, an export object holding it, or an export id. */
export type IntentExportTarget = string | { download_url?: string | null; export_id?: string };
