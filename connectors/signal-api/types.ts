/**
 * Public types of the Signal Data Service client: request arguments and normalized results.
 *
 * Field names are the spec's (snake_case), so the spec doubles as the reference. Every result object carries
 * `credits` (from `x-credits-charged`, 0 when absent) and `requestId` (from `x-request-id`, when sent).
 * Results keep fields the client does not know about (`[key: string]: unknown`).
 * Normalized output: timestamps are ISO 8601 UTC with `Z` (`2026-03-01T12:00:00.000Z`), domains lower case,
 * `signal_name` never empty when a summary exists, `linkedin_url_absolute` next to every `linkedin_url`.
 */
import type { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';

// ─── client options ────────────────────────────────────────────────────────────────────────────────────────────

export interface RetryOptions {
  /** Attempts in total, the first included (default 4). */
  maxAttempts: number;
  /** Backoff base: attempt n waits a random time in [0, min(maxDelayMs, baseDelayMs * 2^(n-1))] (default 250). */
  baseDelayMs: number;
  /** Backoff cap (default 8000). A server's `Retry-After` is honoured even when longer. */
  maxDelayMs: number;
  /** A `Retry-After` longer than this is not waited for: the error is thrown at once (default 120000). */
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
  /** Retry policy for 429, 5xx and network failures; `false` leaves retries to the caller (Temporal). */
  retry?: false | Partial<RetryOptions>;
  /** Use this undici dispatcher instead of the client's own keep-alive `Agent`; `close()` leaves it open. */
  dispatcher?: Dispatcher;
  /** Called before each retry wait (for logging and tests). Never given the API key. */
  onRetry?: (event: RetryEvent) => void;
  /** `User-Agent` header (default `signal-kit`). */
  userAgent?: string;
}

/** Per-call options, the last argument of every method. */
export interface CallOptions {
  /** Abort the call (the abort reason is rethrown as is). */
  signal?: AbortSignal;
  /** Overrides the client's `timeoutMs` for this call. */
  timeoutMs?: number;
  /** Overrides the client's retry policy for this call. */
  retry?: false | Partial<RetryOptions>;
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

// ─── signals and companies (spec 2.1 to 2.5) ──────────────────────────────────────────────────────────────────

export interface Company {
  name: string;
  /** Lower-case root domain, the join key. */
  domain: string;
  /** As sent by the service (may be a relative path such as `/company/acme`). */
  linkedin_url?: string;
  /** `linkedin_url` made absolute (`https://www.linkedin.com/company/acme`). */
  linkedin_url_absolute?: string;
  industries?: string[];
  employee_count_low?: number;
  employee_count_high?: number;
  revenue?: string;
  description?: string | null;
  [key: string]: unknown;
}

export interface SignalData {
  summary: string;
  [key: string]: unknown;
}

export interface Signal {
  /** `sig_<id>` or a UUID, as sent. */
  signal_id: string;
  signal_type: string;
  /** '' when the service sent none. */
  signal_subtype: string;
  /** The display name, or `data.summary` when the service sent an empty one. */
  signal_name: string;
  /** ISO 8601 UTC with `Z`. */
  detected_at: string;
  /** `company` or `contact`. */
  association?: string;
  company?: Company;
  data: SignalData;
  [key: string]: unknown;
}

export interface Coverage {
  total_before_filters?: number;
  total_after_filters?: number;
  signal_types_available?: string[];
  date_range?: { earliest?: string | null; latest?: string | null; [key: string]: unknown };
  [key: string]: unknown;
}

export interface CompanyEnrichment {
  company: Company;
  signals: Signal[];
  /** signal_type → count of returned signals (computed from `signals` when the service omits it). */
  signal_summary: Record<string, number>;
  coverage?: Coverage;
  [key: string]: unknown;
}

export type CompanyEnrichResult = WithMeta<CompanyEnrichment>;

/** The older `GET /v1/companies/enrich?domain=` body, as sent (spec 4.1). */
export interface LegacyCompanyEnrichBody {
  domain: string;
  company?: string;
  industry?: string | null;
  employee_count?: number | null;
  funding?: { total_raised?: unknown; last_round?: unknown; valuation?: unknown; [key: string]: unknown } | null;
  signals: { type: string; [key: string]: unknown }[];
  signal_count?: number;
  last_updated?: string | null;
  [key: string]: unknown;
}

/** The legacy form mapped onto the company enrichment result; the original body is kept in `legacy`. */
export type LegacyCompanyEnrichResult = CompanyEnrichResult & { legacy: LegacyCompanyEnrichBody };

export interface Contact {
  first_name?: string;
  last_name?: string;
  full_name?: string;
  email?: string;
  job_title?: string;
  linkedin_url?: string;
  linkedin_url_absolute?: string;
  city?: string;
  state?: string;
  country?: string;
  [key: string]: unknown;
}

export interface ContactEnrichment {
  contact: Contact;
  /** The resolved employer. */
  company?: Company;
  contact_signals: Signal[];
  signal_summary: Record<string, number>;
  total: number;
  coverage?: Coverage;
  [key: string]: unknown;
}

export type ContactEnrichResult = WithMeta<ContactEnrichment>;

// ─── bulk enrich (sandbox README: spec 4.2 shapes) ──────────────────────────────────────────────────────────────

export interface BulkEnrichOk extends CompanyEnrichment {
  domain: string;
  status: 'ok';
}

export interface BulkEnrichNotFound {
  domain: string;
  status: 'not_found';
  [key: string]: unknown;
}

export interface BulkEnrichFailed {
  domain: string;
  status: 'error';
  error: { code: string; message: string; [key: string]: unknown };
  [key: string]: unknown;
}

export type BulkEnrichItem = BulkEnrichOk | BulkEnrichNotFound | BulkEnrichFailed;

export interface BulkEnrichSummary {
  requested: number;
  ok: number;
  not_found: number;
  error: number;
  signals: number;
  [key: string]: unknown;
}

export interface BulkEnrichBody {
  results: BulkEnrichItem[];
  summary: BulkEnrichSummary;
  [key: string]: unknown;
}

export type BulkEnrichResult = WithMeta<BulkEnrichBody>;

// ─── search (spec 4.4, 4.5) ───────────────────────────────────────────────────────────────────────────────────

export interface CompanySearchItem {
  name: string;
  domain: string;
  signal_count: number;
  latest_signal_at?: string;
  industries?: string[];
  [key: string]: unknown;
}

export interface CompanySearchBody {
  companies: CompanySearchItem[];
  count: number;
  [key: string]: unknown;
}

export type CompanySearchResult = WithMeta<CompanySearchBody>;

export interface ContactSearchItem {
  contact: Contact;
  company?: Company;
  signal_count: number;
  latest_signal_at?: string;
  [key: string]: unknown;
}

export interface ContactSearchBody {
  contacts: ContactSearchItem[];
  count: number;
  [key: string]: unknown;
}

export type ContactSearchResult = WithMeta<ContactSearchBody>;

// ─── lookups (spec 4.6 to 4.8) ────────────────────────────────────────────────────────────────────────────────

export type SignalResult = WithMeta<Signal>;

export interface SignalTypeInfo {
  signal_type: string;
  category?: string;
  description?: string;
  subtypes: string[];
  signal_count?: number;
  [key: string]: unknown;
}

export interface SignalTypesBody {
  types: SignalTypeInfo[];
  [key: string]: unknown;
}

export type SignalTypesResult = WithMeta<SignalTypesBody>;

export interface StatsBody {
  total_signals?: number;
  total_companies?: number;
  by_type?: Record<string, number>;
  freshness?: { latest_detected_at?: string; median_age_hours?: number; [key: string]: unknown };
  generated_at?: string;
  [key: string]: unknown;
}

export type StatsResult = WithMeta<StatsBody>;

// ─── buyer intent (spec 2.7, 4.9 to 4.11) ───────────────────────────────────────────────────────────────────────

export interface IntentContact {
  first_name?: string;
  last_name?: string;
  email?: string | null;
  /** e.g. `Valid (Esp)`; null when not validated. */
  email_validation_status: string | null;
  job_title?: string;
  linkedin_url?: string;
  linkedin_url_absolute?: string;
  [key: string]: unknown;
}

export interface IntentCompany {
  name?: string;
  domain?: string;
  industry?: string | null;
  [key: string]: unknown;
}

export interface BuyerIntentContact {
  /** `b2b_<number>`. */
  topic_id: string;
  intent_score: number;
  contact: IntentContact;
  company: IntentCompany;
  [key: string]: unknown;
}

export interface BuyerIntentContactsBody {
  contacts: BuyerIntentContact[];
  count: number;
  page_size: number;
  /** null on the last page. */
  next_cursor: string | null;
  [key: string]: unknown;
}

export type BuyerIntentContactsPage = WithMeta<BuyerIntentContactsBody>;

export interface Topic {
  topic_id: string;
  name: string;
  category?: string;
  [key: string]: unknown;
}

export interface TopicsBody {
  topics: Topic[];
  next_cursor: string | null;
  [key: string]: unknown;
}

export type TopicsPage = WithMeta<TopicsBody>;

export type IntentExportStatus = 'queued' | 'running' | 'ready' | 'failed' | 'expired' | (string & {});

export interface IntentExport {
  export_id: string;
  /** Absent when the service's answer had none (the spec shows neither the submit's nor the poll's body). */
  status?: IntentExportStatus;
  created_at?: string;
  updated_at?: string;
  row_count?: number;
  /** Signed, expiring link to the JSONL file; present when `status` is `ready`. */
  download_url?: string;
  expires_at?: string;
  error?: { code: string; message: string; [key: string]: unknown };
  [key: string]: unknown;
}

export type IntentExportResult = WithMeta<IntentExport>;

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

// ─── email verification (spec 2.8, 4.12, 4.13) ─────────────────────────────────────────────────────────────────

export type EmailVerificationOutcome = 'deliverable' | 'undeliverable' | 'risky' | 'unknown' | (string & {});

export interface EmailVerificationDetails {
  is_free_provider?: boolean;
  is_disposable?: boolean;
  is_role_account?: boolean;
  is_catch_all?: boolean;
  has_mx_record?: boolean;
  email_provider?: string | null;
  domain_age_days?: number | null;
  suggested_correction?: string | null;
  [key: string]: unknown;
}

export interface EmailVerification {
  email: string;
  result: EmailVerificationOutcome;
  confidence: number;
  reason?: string;
  risk_level?: string;
  details: EmailVerificationDetails;
  validated_at?: string;
  [key: string]: unknown;
}

export interface VerifyEmailBody {
  result: EmailVerification;
  [key: string]: unknown;
}

export type VerifyEmailResult = WithMeta<VerifyEmailBody>;

export interface BulkVerifyError {
  email?: string;
  code: string;
  message?: string;
  [key: string]: unknown;
}

export interface BulkVerifySummary {
  total: number;
  deliverable: number;
  undeliverable: number;
  risky: number;
  unknown: number;
  [key: string]: unknown;
}

export interface VerifyEmailsBody {
  verifications: EmailVerification[];
  summary: BulkVerifySummary;
  errors: BulkVerifyError[];
  validated_at?: string;
  [key: string]: unknown;
}

export type VerifyEmailsResult = WithMeta<VerifyEmailsBody>;

// ─── webhooks (spec 6; paths from the sandbox README) ──────────────────────────────────────────────────────────

export interface Webhook {
  webhook_id: string;
  url: string;
  signal_types: string[];
  description?: string | null;
  status: 'active' | 'paused' | (string & {});
  /** Signing secret (`whsec_...`); only in the answer to `createWebhook`. */
  secret?: string;
  created_at?: string;
  [key: string]: unknown;
}

export type WebhookResult = WithMeta<Webhook>;
export interface WebhookListBody {
  webhooks: Webhook[];
  [key: string]: unknown;
}

export interface WebhookDeleteBody {
  webhook_id: string;
  deleted: boolean;
  [key: string]: unknown;
}

export interface WebhookTestBody {
  delivered: boolean;
  status_code?: number | null;
  attempts?: number;
  [key: string]: unknown;
}

export type WebhookListResult = WithMeta<WebhookListBody>;
export type WebhookDeleteResult = WithMeta<WebhookDeleteBody>;
export type WebhookTestResult = WithMeta<WebhookTestBody>;

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
