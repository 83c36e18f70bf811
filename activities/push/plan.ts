import { Context } from '@temporalio/activity';
import { InputError } from '../../connectors/errors.ts';
import { domainFromWebsite, type Normalized } from '../../connectors/normalize/domain.ts';
import type { Store } from '../../connectors/storage/store.ts';
import { openInput, readInputRecords } from '../input/read-input.ts';
import { planKey, SCHEDULE_NAME } from '../run/scheduled-layout.ts';
import { canonicalTime, readWatermarkState } from '../state/watermarks.ts';
import { readBatchRecord } from './fetch.ts';
import { pushBatchKey, roundKey } from './layout.ts';
import { type PackedCall, packCalls } from './pack.ts';
import type {
  DomainOutcome,
  PreparePushRequest,
  PushBatch,
  PushBatchDomain,
  PushPlan,
  PushRound,
  PushRunRef,
} from './types.ts';

/** Domains per `POST /v1/companies/enrich/bulk` call (spec 4.2). */
export const PUSH_BATCH_SIZE = 100;

const INVALID_SAMPLES = 100;
const PENDING_WRITES = 8;

/** `_plan.json`: the plan the workflow sees, plus what the manifest reports later. */
export interface StoredPlan extends PushPlan {
  watchlist: string;
  since: string | null;
  planned_at: string;
  invalid_rows: { row: number; raw: unknown; error: string }[];
}

/**
 * Plans one run's first round: reads the watchlist (normalized, deduped) and the push's state, gives each domain the
 * time it needs signals after (its watermark less the lookback; `since` or its whole history when it has none; a
 * backfill's `from`), packs the domains into full bulk calls (packCalls) and writes one batch file per call.
 * Written once per run: `_plan.json` comes last and a retried run gets it back as is, so its batches never change,
 * whatever later runs commit.
 */
export async function preparePushRun(
  openStore: (url: string) => Store,
  request: PreparePushRequest,
): Promise<PushPlan> {
  const { run } = request;
  if (!SCHEDULE_NAME.test(run.name)) {
    throw new InputError(`push name "${run.name}": use lower-case letters, digits, "-" and "_" (at most 63)`);
  }
  const batchSize = Math.min(PUSH_BATCH_SIZE, Math.max(1, request.batchSize ?? PUSH_BATCH_SIZE));
  const out = openStore(run.output);
  if (await out.exists(planKey(run))) return toPlan(JSON.parse(await out.readText(planKey(run))) as StoredPlan);

  const since = optionalTime('since', request.since);
  const window = request.window
    ? { from: optionalTime('window.from', request.window.from)!, to: optionalTime('window.to', request.window.to)! }
    : undefined;
  const lookback = Math.max(0, request.lookbackMs ?? 0);
  const useState = !window && !request.fullRefresh;
  const state = useState ? await readWatermarkState(out, run.name) : undefined;
  const entries: PushBatchDomain[] = [];
  const seen = new Set<string>();
  const stats = { rows: 0, duplicates: 0, invalid: 0 };
  const invalidRows: StoredPlan['invalid_rows'] = [];
  const heartbeat = throttledHeartbeat();

  const source = await openInput(openStore, request.watchlist);
  // A watchlist's domain column is found as a person names it (Website, Company Domain Name, ...), as for enrich.
  const columns = { roles: ['domain' as const], column: request.column };
  for await (const record of readInputRecords(source, columns)) {
    stats.rows += 1;
    heartbeat(stats.rows);
    const normalized = record.error ? { ok: false as const, reason: record.error } : firstDomain(record.candidates);
    if (!normalized.ok) {
      stats.invalid += 1;
      if (invalidRows.length < INVALID_SAMPLES) {
        invalidRows.push({ row: record.row, raw: record.raw ?? null, error: normalized.reason });
      }
      continue;
    }
    const domain = normalized.value;
    if (seen.has(domain)) {
      stats.duplicates += 1;
      continue;
    }
    seen.add(domain);
    if (window) {
      entries.push({ domain, start: window.from, through: null });
      continue;
    }
    const through = state?.marks.get(domain) ?? null;
    const cover = lookback > 0 ? state?.covered.get(domain) : undefined;
    const start = through === null ? since : lookbackStart(through, lookback, cover);
    const pushed = state?.pushed.get(domain);
    entries.push({ domain, start, through, ...(pushed?.length ? { pushed } : {}), ...(cover ? { cover } : {}) });
  }
  if (stats.rows === 0) throw new InputError(`watchlist ${request.watchlist} has no data rows`);

  const { calls, mixed } = packCalls(entries, batchSize);
  const extra = {
    ...(window ? { before: window.to } : {}),
    ...(lookback > 0 ? { lookback_ms: lookback } : {}),
  };
  await writeBatches(out, run, toBatches(calls, 0, 0, request.limit, extra), heartbeat);

  const plan: StoredPlan = {
    rows: stats.rows,
    distinct: seen.size,
    duplicates: stats.duplicates,
    invalid: stats.invalid,
    batches: calls.length,
    groups: new Set(entries.map((entry) => entry.start)).size,
    mixed,
    watermarksFrom: state?.runId ?? null,
    watchlist: request.watchlist,
    since,
    planned_at: new Date().toISOString(),
    invalid_rows: invalidRows,
  };
  await out.writeText(planKey(run), `${JSON.stringify(plan, null, 2)}\n`, { contentType: 'application/json' });
  return toPlan(plan);
}

export interface PrepareCatchUpRequest {
  run: PushRunRef;
  round: number;
  /** `limit`: domains that filled a small first limit; `narrow`: domains still cut at 500, asked type by type. */
  kind: PushRound['kind'];
  /** The batches of the rounds before: `[from, to)`. */
  from: number;
  to: number;
  /** Signals per domain in the catch-up calls (the spec's maximum). */
  limit: number;
  /** The push's type filter: a narrowed call asks only types inside it. */
  signalTypes?: string[];
  batchSize?: number;
}

/**
 * Plans a catch-up round, numbered after the rounds before it and written once (`_round-N.json` last), from each
 * domain's latest outcome in them:
 * - `limit`: the domains that returned as many signals as the first call's limit allowed, with more after their
 *   start, are asked again with the larger limit from the same start;
 * - `narrow`: the domains that still had more than 500, once per signal type they have (one bulk call per type for
 *   up to 100 of them), which reaches signals older than the newest 500.
 * Either way the signals they already pushed are listed, so they are dropped (and counted as overlap), and a domain
 * answered in full takes the watermark of the call that left it behind (`rejoin`).
 */
export async function preparePushCatchUp(store: Store, request: PrepareCatchUpRequest): Promise<PushRound> {
  const { run, round, kind } = request;
  const key = roundKey(run, round);
  if (await store.exists(key)) return JSON.parse(await store.readText(key)) as PushRound;
  const batchSize = Math.min(PUSH_BATCH_SIZE, Math.max(1, request.batchSize ?? PUSH_BATCH_SIZE));
  const latest = new Map<string, { outcome: DomainOutcome; entry: PushBatchDomain; answeredAt: string | null }>();
  let template: PushBatch | undefined;
  for (let index = request.from; index < request.to; index++) {
    const record = await readBatchRecord(store, run, index);
    if (!record || record.failed) continue;
    const wanted = Object.entries(record.domains ?? {});
    if (wanted.length === 0) continue;
    const batch = JSON.parse(await store.readText(pushBatchKey(run, index))) as PushBatch;
    template ??= batch;
    const byDomain = new Map(batch.domains.map((entry) => [entry.domain, entry]));
    for (const [domain, outcome] of wanted) {
      const entry = byDomain.get(domain);
      if (entry) latest.set(domain, { outcome, entry, answeredAt: record.answered_at ?? null });
    }
  }
  const base = (entry: PushBatchDomain, answeredAt: string | null): Omit<PushBatchDomain, 'domain' | 'pushed'> => ({
    start: entry.start,
    through: entry.through,
    ...(entry.cover ? { cover: entry.cover } : {}),
    rejoin: entry.rejoin ?? answeredAt,
  });
  const calls: { types?: string[]; call: PackedCall }[] = [];
  let domains = 0;
  if (kind === 'limit') {
    const behind: PushBatchDomain[] = [];
    for (const [domain, { outcome, entry, answeredAt }] of latest) {
      if (outcome.behind) behind.push({ domain, ...base(entry, answeredAt), pushed: outcome.pushed });
    }
    domains = behind.length;
    for (const call of packCalls(behind, batchSize).calls) calls.push({ call });
  } else {
    const allowed = request.signalTypes?.length ? new Set(request.signalTypes) : undefined;
    const byType = new Map<string, PushBatchDomain[]>();
    for (const [domain, { outcome, entry, answeredAt }] of latest) {
      if (!outcome.narrow) continue;
      domains += 1;
      for (const type of outcome.narrow.types) {
        if (allowed && !allowed.has(type)) continue;
        const list = byType.get(type) ?? [];
        byType.set(type, list);
        list.push({ domain, ...base(entry, answeredAt), pushed: outcome.narrow.received });
      }
    }
    for (const [type, list] of [...byType].sort(([a], [b]) => (a < b ? -1 : 1))) {
      for (const call of packCalls(list, batchSize).calls) calls.push({ types: [type], call });
    }
  }
  const extra = {
    ...(template?.before ? { before: template.before } : {}),
    ...(template?.lookback_ms ? { lookback_ms: template.lookback_ms } : {}),
  };
  const batches = calls.map(({ types, call }, i) => ({
    ...toBatches([call], request.to + i, round, request.limit, extra)[0]!,
    ...(types ? { signal_types: types } : {}),
  }));
  await writeBatches(store, run, batches, throttledHeartbeat());
  const planned: PushRound = { round, kind, first: request.to, count: batches.length, domains };
  await store.writeText(key, JSON.stringify(planned), { contentType: 'application/json' });
  return planned;
}

function toBatches(
  calls: PackedCall[],
  first: number,
  round: number,
  limit: number,
  extra: Pick<PushBatch, 'before' | 'lookback_ms'>,
): PushBatch[] {
  return calls.map((call, i) => ({
    index: first + i,
    round,
    detected_after: call.detected_after,
    ...extra,
    limit,
    domains: call.domains,
  }));
}

async function writeBatches(
  out: Store,
  run: PushRunRef,
  batches: PushBatch[],
  heartbeat: (details: unknown) => void,
): Promise<void> {
  const pending = new Set<Promise<void>>();
  for (const batch of batches) {
    const write = out.writeText(pushBatchKey(run, batch.index), JSON.stringify(batch), {
      contentType: 'application/json',
    });
    const tracked = write.finally(() => pending.delete(tracked));
    pending.add(tracked);
    if (pending.size >= PENDING_WRITES) await Promise.race(pending);
    heartbeat(batch.index);
  }
  await Promise.all(pending);
}

/**
 * Where a domain with a watermark starts under a lookback: that far below it, but never below the time after which
 * its pushed signals are all remembered (so nothing is pushed twice). A lookback therefore reaches back only as
 * far as runs with it have remembered: the first such run starts at the watermark.
 */
function lookbackStart(through: string, lookback: number, cover: string | undefined): string {
  if (lookback === 0 || cover === undefined) return through;
  return new Date(
    Math.max(Date.parse(through) - lookback, Math.min(Date.parse(cover), Date.parse(through))),
  ).toISOString();
}

function optionalTime(field: string, value: string | undefined): string | null {
  if (value === undefined) return null;
  if (Number.isNaN(Date.parse(value))) throw new InputError(`${field} "${value}" is not an ISO 8601 date`);
  return canonicalTime(value);
}

function toPlan(stored: StoredPlan): PushPlan {
  const { rows, distinct, duplicates, invalid, batches, groups, watermarksFrom } = stored;
  return { rows, distinct, duplicates, invalid, batches, groups, mixed: stored.mixed ?? 0, watermarksFrom };
}

function throttledHeartbeat(): (details: unknown) => void {
  let last = 0;
  return (details) => {
    const now = Date.now();
    if (now - last < 5000) return;
    last = now;
    try {
      Context.current().heartbeat(details);
    } catch {
      // not inside an activity (unit tests)
    }
  };
}

/** The first of a row's domain columns that holds a usable domain (a watchlist is domains only). */
function firstDomain(candidates: readonly { raw: unknown }[] | undefined): Normalized {
  let failure: Normalized | undefined;
  for (const { raw } of candidates ?? []) {
    const outcome = domainFromWebsite(raw);
    if (outcome.ok) return outcome;
    if (!failure || (failure.ok === false && failure.reason === 'empty')) failure = outcome;
  }
  return failure ?? { ok: false, reason: 'empty' };
}
