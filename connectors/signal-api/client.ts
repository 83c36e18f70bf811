/**
 * `SignalClient`: one method per endpoint of the Signal Data Service (spec section 4, plus the shapes the
 * sandbox README fixes where the spec is silent). Arguments and results use the spec's field names; every
 * result carries `credits` and `requestId`. See `http.ts` for timeouts and retries, `errors.ts` for failures.
 *
 * ```ts
 * const client = new SignalClient({ baseUrl, apiKey });
 * const { signals, credits } = await client.enrichCompany({ domain: 'acme.com', limit: 50 });
 * for await (const contact of client.iterateBuyerIntentContacts({ topic_ids: ['b2b_42'] })) { ... }
 * await client.close();
 * ```
 */
import type { z } from 'zod';
import { SignalApiError, UnexpectedResponseError, ValidationError } from '../errors.ts';
import { type SignalCreatedEvent, SignalCreatedEventSchema } from '../webhooks/events.ts';
import { type AnswerProblem, bulkSignalsOverLimit, signalsOverLimit } from './answer-limits.ts';
import { parseBulkEnrichAnswer } from './bulk-answer.ts';
import { type ApiRequest, type RequestPacing, Transport } from './http.ts';
import {
  BuyerIntentPageSchema,
  CompanyEnrichSchema,
  CompanySearchSchema,
  ContactEnrichSchema,
  ContactSearchSchema,
  IntentExportSchema,
  LegacyEnrichSchema,
  SignalSchema,
  SignalTypesSchema,
  StatsSchema,
  TopicsPageSchema,
  VerifyEmailSchema,
  VerifyEmailsSchema,
  WebhookDeleteSchema,
  WebhookListSchema,
  WebhookSchema,
  WebhookTestSchema,
} from './schemas.ts';
import type {
  BulkEnrichResult,
  BuyerIntentContact,
  BuyerIntentContactsPage,
  BuyerIntentContactsParams,
  CallOptions,
  CompanyEnrichResult,
  CompanySearchResult,
  ContactEnrichResult,
  ContactSearchResult,
  CreateIntentExportParams,
  CreateWebhookParams,
  DownloadOptions,
  EnrichCompaniesParams,
  EnrichCompanyLegacyParams,
  EnrichCompanyParams,
  EnrichContactParams,
  IntentExportDownload,
  IntentExportResult,
  IntentExportTarget,
  LegacyCompanyEnrichResult,
  ResponseMeta,
  SearchCompaniesParams,
  SearchContactsParams,
  SearchTopicsParams,
  SignalClientOptions,
  SignalResult,
  SignalTypesResult,
  StatsResult,
  Topic,
  TopicsPage,
  UpdateWebhookParams,
  VerifyEmailParams,
  VerifyEmailResult,
  VerifyEmailsParams,
  VerifyEmailsResult,
  WebhookDeleteBody,
  WebhookDeleteResult,
  WebhookListResult,
  WebhookResult,
  WebhookTestResult,
  WithMeta,
} from './types.ts';
import {
  checkDomains,
  checkEmails,
  checkPositiveInteger,
  checkSignalLimit,
  checkStringArray,
  checkSubtypes,
  checkTopicIds,
  dateParam,
  requireOneOf,
  requireString,
} from './validate.ts';

function describeIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 5)
    .map((i) => `${i.path.length ? i.path.join('.') : '(root)'}: ${i.message}`)
    .join('; ');
}

function withMeta<T extends object>(value: T, meta: ResponseMeta): WithMeta<T> {
  const out = value as WithMeta<T>;
  out.credits = meta.credits;
  if (meta.requestId !== undefined) out.requestId = meta.requestId;
  if (meta.creditsRemaining !== undefined) out.creditsRemaining = meta.creditsRemaining;
  return out;
}

/** A copy of `params` with `Date`s and date strings of `dateFields` sent as ISO 8601 UTC, undefined dropped. */
function body(params: object, dateFields: readonly string[] = ['detected_after']): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined) continue;
    if (dateFields.includes(k)) out[k] = dateParam(v as Date | string | null, k);
    else out[k] = v instanceof Date ? v.toISOString() : v;
  }
  return out;
}

/** The answer with the `page_size` that was asked for when the service left it out. */
function withPageSize(body: unknown, requested: number | undefined): unknown {
  if (requested === undefined || typeof body !== 'object' || body === null || Array.isArray(body)) return body;
  const page = body as Record<string, unknown>;
  return page['page_size'] === undefined || page['page_size'] === null ? { ...page, page_size: requested } : body;
}

function pathId(id: unknown, field: string): string {
  return encodeURIComponent(requireString(id, field));
}

/** Parses and normalizes a delivered webhook body (spec 6), e.g. in a receiver after verifying its signature. */
export function parseSignalEvent(payload: unknown): SignalCreatedEvent {
  const json = typeof payload === 'string' ? safeJson(payload) : payload;
  const parsed = SignalCreatedEventSchema.safeParse(json);
  if (!parsed.success) {
    throw new ValidationError({
      status: 0,
      code: 'invalid_event',
      message: `webhook event does not have the signal.created shape: ${describeIssues(parsed.error)}`,
    });
  }
  return parsed.data;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new ValidationError({ status: 0, code: 'invalid_json', message: 'webhook event body is not JSON' });
  }
}

/** What parses an answer: a schema in `schemas.ts` (tolerant in, normalized out). */
type Answer<R> = { safeParse(body: unknown): z.ZodSafeParseResult<R> };

export class SignalClient {
  readonly #http: Transport;
  readonly #baseUrl: string;

  constructor(options: SignalClientOptions & RequestPacing) {
    this.#http = new Transport(options);
    this.#baseUrl = options.baseUrl;
  }

  /** How long one attempt of a call may take, from leaving to its whole answer (`timeoutMs`, default 30 s). */
  get timeoutMs(): number {
    return this.#http.timeoutMs;
  }

  /** Closes the keep-alive connections (unless a `dispatcher` was given). */
  async close(): Promise<void> {
    await this.#http.close();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /** Sends `req` and parses its JSON answer with `parse` (a schema's `safeParse`: tolerant in, normalized out). */
  async #call<R extends object>(
    req: ApiRequest,
    parse: (body: unknown) => z.ZodSafeParseResult<R>,
    check?: (data: R) => AnswerProblem | undefined,
  ): Promise<WithMeta<R>> {
    const res = await this.#http.json(req);
    const fail = (detail: string, cause?: unknown, field?: string) =>
      new UnexpectedResponseError({
        status: res.status,
        code: 'unexpected_response',
        field,
        message: this.#http.redact(
          `${req.method} ${req.path}: the response does not have the documented shape: ${detail}`,
        ),
        requestId: res.meta.requestId,
        method: req.method,
        path: req.path,
        creditsCharged: res.meta.credits,
        body: res.body,
        cause,
      });
    const parsed = parse(res.body);
    if (!parsed.success) throw fail(describeIssues(parsed.error), parsed.error);
    const problem = check?.(parsed.data);
    if (problem) throw fail(`${problem.field}: ${problem.message}`, undefined, problem.field);
    return withMeta(parsed.data, res.meta);
  }

  /** A read that sends `params` as its JSON body (so it may be retried), its answer parsed by `answer`. */
  #post<R extends object>(path: string, params: object, answer: Answer<R>, call?: CallOptions): Promise<WithMeta<R>> {
    return this.#call({ method: 'POST', path, body: body(params), idempotent: true, call }, (b) => answer.safeParse(b));
  }

  /** A `GET` of `path` (with `query`), its answer parsed by `answer`. */
  #get<R extends object>(path: string, answer: Answer<R>, call?: CallOptions, query?: ApiRequest['query']) {
    return this.#call({ method: 'GET', path, query, idempotent: true, call }, (b) => answer.safeParse(b));
  }

  // ─── companies and contacts ──────────────────────────────────────────────────────────────────────────────

  /** `POST /v1/companies/enrich`: one company (by `domain`, `company_name` or `linkedin_url`) with its signals. */
  async enrichCompany(params: EnrichCompanyParams, call?: CallOptions): Promise<CompanyEnrichResult> {
    requireOneOf(params, ['domain', 'company_name', 'linkedin_url']);
    checkStringArray(params.signal_types, 'signal_types');
    checkSubtypes(params.signal_subtypes);
    checkSignalLimit(params.limit);
    return this.#call(
      { method: 'POST', path: '/v1/companies/enrich', body: body(params), idempotent: true, call },
      (b) => CompanyEnrichSchema.safeParse(b),
      (answer) => signalsOverLimit(answer.signals, params.limit, 'signals'),
    );
  }

  /**
   * `GET /v1/companies/enrich?domain=`: the older form, mapped onto the same result as `enrichCompany`
   * (the original body is in `legacy`).
   */
  async enrichCompanyLegacy(params: EnrichCompanyLegacyParams, call?: CallOptions): Promise<LegacyCompanyEnrichResult> {
    requireOneOf(params, ['domain']);
    return this.#get('/v1/companies/enrich', LegacyEnrichSchema, call, { domain: params.domain });
  }

  /** `POST /v1/companies/enrich/bulk`: up to 100 domains; one result per distinct domain (`ok`, `not_found`, `error`). */
  async enrichCompanies(params: EnrichCompaniesParams, call?: CallOptions): Promise<BulkEnrichResult> {
    checkDomains(params.domains);
    checkStringArray(params.signal_types, 'signal_types');
    checkSubtypes(params.signal_subtypes);
    checkSignalLimit(params.limit);
    return this.#call(
      { method: 'POST', path: '/v1/companies/enrich/bulk', body: body(params), idempotent: true, call },
      parseBulkEnrichAnswer,
      (answer) => bulkSignalsOverLimit(answer.results, params.limit),
    );
  }

  /** `POST /v1/contacts/enrich`: a contact (by `contact_email` or `contact_linkedin_url`) with person-level signals. */
  async enrichContact(params: EnrichContactParams, call?: CallOptions): Promise<ContactEnrichResult> {
    requireOneOf(params, ['contact_email', 'contact_linkedin_url']);
    checkStringArray(params.signal_types, 'signal_types');
    checkSignalLimit(params.limit);
    return this.#post('/v1/contacts/enrich', params, ContactEnrichSchema, call);
  }

  /** `POST /v1/companies/search`: companies by signal activity, most recent signal first. */
  async searchCompanies(params: SearchCompaniesParams = {}, call?: CallOptions): Promise<CompanySearchResult> {
    checkStringArray(params.signal_types, 'signal_types');
    checkPositiveInteger(params.limit, 'limit');
    return this.#post('/v1/companies/search', params, CompanySearchSchema, call);
  }

  /** `POST /v1/contacts/search`: contacts by signal activity, with seniority, department and job title filters. */
  async searchContacts(params: SearchContactsParams = {}, call?: CallOptions): Promise<ContactSearchResult> {
    checkStringArray(params.signal_types, 'signal_types');
    checkPositiveInteger(params.limit, 'limit');
    return this.#post('/v1/contacts/search', params, ContactSearchSchema, call);
  }

  // ─── lookups (free) ──────────────────────────────────────────────────────────────────────────────────────

  /** `GET /v1/signals/{id}`: one signal by its `sig_<id>` or UUID id. */
  async getSignal(id: string, call?: CallOptions): Promise<SignalResult> {
    return this.#get(`/v1/signals/${pathId(id, 'signal_id')}`, SignalSchema, call);
  }

  /** `GET /v1/signals/types`: every signal type with its subtypes. */
  async listSignalTypes(call?: CallOptions): Promise<SignalTypesResult> {
    return this.#get('/v1/signals/types', SignalTypesSchema, call);
  }

  /** `GET /v1/stats`: database statistics. */
  async getStats(call?: CallOptions): Promise<StatsResult> {
    return this.#get('/v1/stats', StatsSchema, call);
  }

  // ─── buyer intent ────────────────────────────────────────────────────────────────────────────────────────

  /** `POST /v1/buyer-intent/contacts`: one page; pass the previous page's `next_cursor` as `cursor`. */
  async buyerIntentContacts(params: BuyerIntentContactsParams, call?: CallOptions): Promise<BuyerIntentContactsPage> {
    checkTopicIds(params.topic_ids);
    checkPositiveInteger(params.page_size, 'page_size');
    const { cursor, ...rest } = params;
    const b = body(rest);
    if (cursor !== undefined && cursor !== null && cursor !== '') b['cursor'] = cursor;
    return this.#call({ method: 'POST', path: '/v1/buyer-intent/contacts', body: b, idempotent: true, call }, (body) =>
      BuyerIntentPageSchema.safeParse(withPageSize(body, params.page_size)),
    );
  }

  /** Every page of `buyerIntentContacts`, following `next_cursor` to the end (from `params.cursor`, if given). */
  async *iterateBuyerIntentContactPages(
    params: BuyerIntentContactsParams,
    call?: CallOptions,
  ): AsyncGenerator<BuyerIntentContactsPage, void, undefined> {
    yield* paginate((cursor) => this.buyerIntentContacts({ ...params, cursor }, call), params.cursor ?? null);
  }

  /** Every buyer-intent contact, page after page to the end. Same arguments as `buyerIntentContacts`. */
  async *iterateBuyerIntentContacts(
    params: BuyerIntentContactsParams,
    call?: CallOptions,
  ): AsyncGenerator<BuyerIntentContact, void, undefined> {
    for await (const page of this.iterateBuyerIntentContactPages(params, call)) yield* page.contacts;
  }

  /** `GET /v1/buyer-intent/topics?q=&limit=&cursor=`: the topic catalog (path from the sandbox README). Free. */
  async searchTopics(params: SearchTopicsParams = {}, call?: CallOptions): Promise<TopicsPage> {
    checkPositiveInteger(params.limit, 'limit');
    const query = { q: params.q, limit: params.limit, cursor: params.cursor };
    return this.#get('/v1/buyer-intent/topics', TopicsPageSchema, call, query);
  }

  /** Every page of `searchTopics`, following `next_cursor` to the end. */
  async *iterateTopicPages(
    params: SearchTopicsParams = {},
    call?: CallOptions,
  ): AsyncGenerator<TopicsPage, void, undefined> {
    yield* paginate((cursor) => this.searchTopics({ ...params, cursor }, call), params.cursor ?? null);
  }

  /** Every topic matching `params`, page after page to the end. */
  async *iterateTopics(params: SearchTopicsParams = {}, call?: CallOptions): AsyncGenerator<Topic, void, undefined> {
    for await (const page of this.iterateTopicPages(params, call)) yield* page.topics;
  }

  /**
   * `POST /v1/buyer-intent/contacts/export`: starts an asynchronous JSONL export (charged at submit).
   * Not retried on ambiguous failures (5xx, reset after sending), so that a job is never submitted twice.
   */
  async createIntentExport(params: CreateIntentExportParams, call?: CallOptions): Promise<IntentExportResult> {
    checkTopicIds(params.topic_ids);
    checkPositiveInteger(params.limit, 'limit');
    return this.#call(
      { method: 'POST', path: '/v1/buyer-intent/contacts/export', body: body(params), idempotent: false, call },
      (body) => IntentExportSchema.safeParse(body),
    );
  }

  /** `GET /v1/buyer-intent/exports/{id}`: the job's state; `download_url` once `status` is `ready`. */
  async getIntentExport(exportId: string, call?: CallOptions): Promise<IntentExportResult> {
    return this.#get(`/v1/buyer-intent/exports/${pathId(exportId, 'export_id')}`, IntentExportSchema, call);
  }

  /**
   * The JSONL body of a ready export, streamed from its signed `download_url` (the API key is not sent there).
   * `target` is the URL, an export object holding it, or an export id (then the job is looked up first and must
   * be `ready`). The returned `body` errors with a `NetworkError` (`truncated_body`) when the transfer is cut off;
   * `offset` resumes with a `Range` request. An expired link is a `NotFoundError` with `code` `gone`.
   */
  async downloadIntentExport(target: IntentExportTarget, options: DownloadOptions = {}): Promise<IntentExportDownload> {
    let url: string | null | undefined;
    let exportId: string | undefined;
    if (typeof target === 'string') {
      if (/^https?:\/\//i.test(target) || target.startsWith('/')) url = target;
      else exportId = target;
    } else {
      url = target.download_url;
      exportId = target.export_id;
    }
    if (!url) {
      if (!exportId)
        throw new ValidationError({
          status: 0,
          code: 'validation_error',
          field: 'download_url',
          message: 'download_url: an export with a download_url, a URL or an export id is required',
        });
      const job = await this.getIntentExport(exportId, options);
      if (job.status !== 'ready' || !job.download_url) {
        throw new SignalApiError({
          status: 0,
          code: `export_${job.status}`,
          message: `export ${job.export_id} is ${job.status}${job.error ? ` (${job.error.code}: ${job.error.message})` : ''}, not ready for download`,
          requestId: job.requestId,
          field: 'status',
        });
      }
      url = job.download_url;
    }
    if (options.offset !== undefined) checkNonNegativeInteger(options.offset, 'offset');
    const resolved = new URL(url, this.#baseUrl);
    return this.#http.download(resolved, options);
  }

  // ─── email verification ──────────────────────────────────────────────────────────────────────────────────

  /** `POST /v1/emails/verify`: `{ result }` with the verification of one address. */
  async verifyEmail(params: VerifyEmailParams, call?: CallOptions): Promise<VerifyEmailResult> {
    requireString(params.email, 'email');
    return this.#post('/v1/emails/verify', params, VerifyEmailSchema, call);
  }

  /** `POST /v1/emails/verify/bulk`: up to 1,000 addresses; duplicates collapsed and charged once. */
  async verifyEmails(params: VerifyEmailsParams, call?: CallOptions): Promise<VerifyEmailsResult> {
    checkEmails(params.emails);
    return this.#post('/v1/emails/verify/bulk', params, VerifyEmailsSchema, call);
  }

  // ─── webhooks (free; paths from the sandbox README) ──────────────────────────────────────────────────────

  /** `POST /v1/webhooks`: a subscription; the answer holds the signing `secret`. Not retried on ambiguous failures. */
  async createWebhook(params: CreateWebhookParams, call?: CallOptions): Promise<WebhookResult> {
    requireString(params.url, 'url');
    checkStringArray(params.signal_types, 'signal_types');
    return this.#call(
      { method: 'POST', path: '/v1/webhooks', body: body(params, []), idempotent: false, call },
      (body) => WebhookSchema.safeParse(body),
    );
  }

  /** `PATCH /v1/webhooks/{id}`: change the URL, types, description or `status` (`active`/`paused`). */
  async updateWebhook(webhookId: string, params: UpdateWebhookParams, call?: CallOptions): Promise<WebhookResult> {
    checkStringArray(params.signal_types, 'signal_types');
    return this.#call(
      {
        method: 'PATCH',
        path: `/v1/webhooks/${pathId(webhookId, 'webhook_id')}`,
        body: body(params, []),
        idempotent: true,
        call,
      },
      (body) => WebhookSchema.safeParse(body),
    );
  }

  /** `DELETE /v1/webhooks/{id}`. */
  async deleteWebhook(webhookId: string, call?: CallOptions): Promise<WebhookDeleteResult> {
    const id = pathId(webhookId, 'webhook_id');
    return this.#call({ method: 'DELETE', path: `/v1/webhooks/${id}`, idempotent: true, call }, (body) => {
      const parsed = WebhookDeleteSchema.safeParse(body);
      if (parsed.success) parsed.data.webhook_id ??= webhookId;
      return parsed as z.ZodSafeParseResult<WebhookDeleteBody>;
    });
  }

  /** `POST /v1/webhooks/{id}/test`: sends one test `signal.created` event now. */
  async testWebhook(webhookId: string, call?: CallOptions): Promise<WebhookTestResult> {
    return this.#call(
      { method: 'POST', path: `/v1/webhooks/${pathId(webhookId, 'webhook_id')}/test`, idempotent: true, call },
      (body) => WebhookTestSchema.safeParse(body),
    );
  }

  /** `GET /v1/webhooks`: every subscription of the account (without secrets). */
  async listWebhooks(call?: CallOptions): Promise<WebhookListResult> {
    return this.#get('/v1/webhooks', WebhookListSchema, call);
  }
}

function checkNonNegativeInteger(value: number, field: string): void {
  if (!Number.isInteger(value) || value < 0) {
    throw new ValidationError({
      status: 0,
      code: 'validation_error',
      field,
      message: `${field}: must be a non-negative integer`,
    });
  }
}

/** Follows `next_cursor` until it is null; a cursor seen twice is a server bug and stops with an error. */
async function* paginate<P extends { next_cursor: string | null; requestId?: string }>(
  fetchPage: (cursor: string | undefined) => Promise<P>,
  start: string | null,
): AsyncGenerator<P, void, undefined> {
  const seen = new Set<string>();
  let cursor = start;
  for (;;) {
    const page = await fetchPage(cursor ?? undefined);
    yield page;
    const next = page.next_cursor;
    if (!next) return;
    if (seen.has(next) || next === cursor) {
      throw new UnexpectedResponseError({
        status: 200,
        code: 'cursor_loop',
        message: `pagination returned the cursor ${JSON.stringify(next)} twice`,
        requestId: page.requestId,
      });
    }
    seen.add(next);
    cursor = next;
  }
}
