/**
 * Buyer intent: contacts with keyset pagination (spec 4.9), the topic catalog, export jobs (spec 4.10, 4.11)
 * and the signed download of an export's JSONL body.
 */
import { z } from 'zod';
import type { ApiRequest, Route } from '../api.ts';
import {
  type IntentFilter,
  type IntentItem,
  intentItem,
  intentSurfacedAt,
  matchesIntentFilter,
  topicContactCount,
} from '../data/intent.ts';
import { TOPIC_COUNT, TOPIC_ID_FORMAT, type Topic, topic, topicNumber } from '../data/topics.ts';
import { notFound, validationError } from '../errors.ts';
import type { ExportPlan, ExportService } from '../exports.ts';
import { hashString, hex8 } from '../random.ts';
import type { DataStore } from '../store.ts';
import { boundedInt, lowerSet, parse, queryInt, queryObject } from '../validation.ts';
import { objectBody } from './common.ts';
import { departmentList, seniorityList } from './contacts.ts';

/** Credits charged per topic when an export is submitted. */
export const EXPORT_CREDITS_PER_TOPIC = 25;

const topicIds = z
  .array(z.string().regex(TOPIC_ID_FORMAT, { error: 'must be of the form b2b_<number>' }))
  .min(1, { error: 'at least 1 entry' })
  .max(100, { error: 'at most 100 entries' });

const filters = {
  topic_ids: topicIds,
  email_validated: z.boolean().optional(),
  seniority: seniorityList.optional(),
  department: departmentList.optional(),
  has_email: z.boolean().optional(),
  has_mobile: z.boolean().optional(),
};

const contactsSchema = z.strictObject({
  ...filters,
  page_size: boundedInt(1, 1000).optional(),
  cursor: z.string().optional(),
});

const exportSchema = z.strictObject({ ...filters, limit: boundedInt(1, 1_000_000).optional() });

/** An export submit's body (spec 4.11). */
export type ExportRequest = z.input<typeof exportSchema>;

type Filters = z.infer<z.ZodObject<typeof filters>>;

/** Catalog topic numbers (duplicates dropped, order kept); 422 for an id outside the catalog. */
function topicNumbers(ids: string[]): number[] {
  const out: number[] = [];
  ids.forEach((id, i) => {
    const n = topicNumber(id);
    if (n === undefined)
      throw validationError(`topic_ids.${i}`, `${id} is not in the topic catalog (b2b_1 to b2b_${TOPIC_COUNT})`);
    if (!out.includes(n)) out.push(n);
  });
  return out;
}

function intentFilter(body: Filters): IntentFilter {
  const f: IntentFilter = {};
  if (body.email_validated !== undefined) f.email_validated = body.email_validated;
  if (body.has_email !== undefined) f.has_email = body.has_email;
  if (body.has_mobile !== undefined) f.has_mobile = body.has_mobile;
  const seniority = lowerSet(body.seniority);
  if (seniority) f.seniority = seniority;
  const department = lowerSet(body.department);
  if (department) f.department = department;
  return f;
}

/** Ties a cursor to its query: a cursor from another query is refused. */
function fingerprint(topics: number[], f: IntentFilter): string {
  const norm = JSON.stringify([
    topics,
    f.email_validated ?? null,
    f.has_email ?? null,
    f.has_mobile ?? null,
    f.seniority ? [...f.seniority].sort() : null,
    f.department ? [...f.department].sort() : null,
  ]);
  return hex8(hashString(norm, 0xc0501));
}

function encodeCursor(pos: number, j: number, fp: string): string {
  return Buffer.from(`v1:${pos}:${j}:${fp}`).toString('base64url');
}

function decodeCursor(cursor: string, fp: string, topics: number): { pos: number; j: number } {
  const m = /^v1:(\d+):(\d+):([0-9a-f]{8})$/.exec(Buffer.from(cursor, 'base64url').toString('latin1'));
  if (!m) throw validationError('cursor', 'not a cursor this service issued');
  if (m[3] !== fp) throw validationError('cursor', 'the cursor belongs to a different query');
  const pos = Number(m[1]);
  const j = Number(m[2]);
  if (pos >= topics) throw validationError('cursor', 'the cursor is past the end of the results');
  return { pos, j };
}

function contacts(req: ApiRequest, store: DataStore) {
  const body = parse(contactsSchema, req.body);
  const topics = topicNumbers(body.topic_ids);
  const f = intentFilter(body);
  const fp = fingerprint(topics, f);
  const pageSize = body.page_size ?? 100;
  let { pos, j } = body.cursor !== undefined ? decodeCursor(body.cursor, fp, topics.length) : { pos: 0, j: 0 };
  const out: IntentItem[] = [];
  let next: string | null = null;
  const catalog = store.catalog;
  // Walks topic by topic; once the page is full, keeps walking only to find where the next match is, so the
  // cursor points at it and no trailing empty page is ever served.
  scan: while (pos < topics.length) {
    const n = topics[pos]!;
    const size = topicContactCount(store.seed, n);
    for (; j < size; j++) {
      if (intentSurfacedAt(store.seed, n, j, store.intentSurfacing) > req.now) continue;
      const item = intentItem(store.seed, catalog, n, j, size);
      if (!matchesIntentFilter(item, f)) continue;
      if (out.length === pageSize) {
        next = encodeCursor(pos, j, fp);
        break scan;
      }
      out.push(item);
    }
    pos++;
    j = 0;
  }
  req.charge(out.length);
  return { body: { contacts: out, count: out.length, page_size: pageSize, next_cursor: next } };
}

/** Every item a buyer-intent contacts body matches now, in page order (the oracle: all pages at once). */
export function allIntentContacts(store: DataStore, rawBody: unknown, now: number): IntentItem[] {
  const body = parse(contactsSchema, objectBody(rawBody));
  const f = intentFilter(body);
  const out: IntentItem[] = [];
  for (const n of topicNumbers(body.topic_ids)) {
    const size = topicContactCount(store.seed, n);
    for (let j = 0; j < size; j++) {
      if (intentSurfacedAt(store.seed, n, j, store.intentSurfacing) > now) continue;
      const item = intentItem(store.seed, store.catalog, n, j, size);
      if (matchesIntentFilter(item, f)) out.push(item);
    }
  }
  return out;
}

const topicsQuery = z.strictObject({
  q: z.string().max(200).optional(),
  limit: queryInt(1, 1000).optional(),
  cursor: z.string().optional(),
});

function topics(req: ApiRequest, store: DataStore) {
  const q = parse(topicsQuery, queryObject(req.query));
  const limit = q.limit ?? 50;
  let start = 1;
  if (q.cursor !== undefined) {
    const m = /^t:(\d+)$/.exec(Buffer.from(q.cursor, 'base64url').toString('latin1'));
    if (!m) throw validationError('cursor', 'not a cursor this service issued');
    start = Number(m[1]);
  }
  const needle = q.q?.trim().toLowerCase() ?? '';
  const out: Topic[] = [];
  let next: string | null = null;
  for (let n = start; n <= TOPIC_COUNT; n++) {
    const t = topic(store.seed, n);
    if (needle && !t.name.toLowerCase().includes(needle) && t.topic_id !== needle) continue;
    if (out.length === limit) {
      next = Buffer.from(`t:${n}`).toString('base64url');
      break;
    }
    out.push(t);
  }
  return { body: { topics: out, next_cursor: next } };
}

export interface ExportQuote {
  topics: number[];
  limit: number | undefined;
  plan: ExportPlan;
  rowCount: number;
  /** The flat rate per distinct topic, or 0 when the export has no rows. */
  credits: number;
}

/** What an export request will hold and cost (422 for a bad request), before anything is charged. */
export function quoteExport(exports: ExportService, rawBody: unknown): ExportQuote {
  const body = parse(exportSchema, objectBody(rawBody));
  const topics = topicNumbers(body.topic_ids);
  const plan = exports.plan(topics, intentFilter(body), body.limit);
  const credits = plan.rowCount > 0 ? EXPORT_CREDITS_PER_TOPIC * topics.length : 0;
  return { topics, limit: body.limit, plan, rowCount: plan.rowCount, credits };
}

export const intentRoutes: Route[] = [
  { method: 'POST', path: '/v1/buyer-intent/contacts', handler: (req, ctx) => contacts(req, ctx.store) },
  { method: 'GET', path: '/v1/buyer-intent/topics', handler: (req, ctx) => topics(req, ctx.store) },
  {
    method: 'POST',
    path: '/v1/buyer-intent/contacts/export',
    handler: (req, ctx) => {
      const quote = quoteExport(ctx.exports, req.body);
      // Spec 7: a call that returns no results is never charged, so an export with no rows is free.
      req.charge(quote.credits);
      const job = ctx.exports.submit(req.account, quote.topics, quote.plan, req.now);
      req.note({ topic_ids: job.topicIds, limit: quote.limit ?? null }, { export_id: job.id, row_count: job.rowCount });
      return { status: 202, body: ctx.exports.view(job, req.now, ctx.baseUrl()) };
    },
  },
  {
    method: 'GET',
    path: '/v1/buyer-intent/exports/:id',
    handler: (req, ctx) => {
      const job = ctx.exports.get(req.params['id']!, req.account);
      if (!job) throw notFound(`no export ${req.params['id']}`);
      const view = ctx.exports.view(job, req.now, ctx.baseUrl());
      req.note({ export_id: job.id }, { status: view.status, row_count: view.row_count ?? null });
      return { body: view };
    },
  },
  {
    method: 'GET',
    path: '/downloads/exports/:file',
    raw: (req, res, ctx, info) => ctx.exports.download(req, res, info.requestId, info.params['file']!, info.query),
  },
];
