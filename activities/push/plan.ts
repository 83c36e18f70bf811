import { Context } from '@temporalio/activity';
import { domainFromWebsite } from '../../connectors/normalize/domain.ts';
import type { Store } from '../../connectors/storage/store.ts';
import { inputFailure } from '../jobs/failures.ts';
import { openInput, readInputRecords } from '../jobs/input.ts';
import { PUSH_NAME, planKey, pushBatchKey } from './layout.ts';
import type { PreparePushRequest, PushBatch, PushPlan } from './types.ts';
import { canonicalTime, readWatermarks } from './watermarks.ts';

/** Domains per `POST /v1/companies/enrich/bulk` call (spec 4.2). */
export const PUSH_BATCH_SIZE = 100;

const DEFAULT_COLUMNS = ['domain', 'website', 'url', 'company_domain'];
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
 * Plans one run: reads the watchlist (normalized, deduped) and the push's watermarks, groups the domains by
 * watermark (domains that share one share a bulk call, up to 100) and writes one batch file per call. Written
 * once per run: `_plan.json` comes last and a retried run gets it back as is, so its batches and their
 * `detected_after` never change, whatever later runs commit.
 */
export async function preparePushRun(
  openStore: (url: string) => Store,
  request: PreparePushRequest,
): Promise<PushPlan> {
  const { run } = request;
  if (!PUSH_NAME.test(run.name)) {
    throw inputFailure(`push name "${run.name}": use lower-case letters, digits, "-" and "_" (at most 63)`);
  }
  const batchSize = Math.min(PUSH_BATCH_SIZE, Math.max(1, request.batchSize ?? PUSH_BATCH_SIZE));
  const out = openStore(run.output);
  if (await out.exists(planKey(run))) return toPlan(JSON.parse(await out.readText(planKey(run))) as StoredPlan);

  if (request.since !== undefined && Number.isNaN(Date.parse(request.since))) {
    throw inputFailure(`since "${request.since}" is not an ISO 8601 date`);
  }
  const since = request.since === undefined ? null : canonicalTime(request.since);
  const watermarks = await readWatermarks(out, run.name);
  const groups = new Map<string, string[]>();
  const seen = new Set<string>();
  const stats = { rows: 0, duplicates: 0, invalid: 0 };
  const invalidRows: StoredPlan['invalid_rows'] = [];
  const heartbeat = throttledHeartbeat();

  const source = await openInput(openStore, request.watchlist);
  const columns = request.column ? [request.column] : DEFAULT_COLUMNS;
  for await (const record of readInputRecords(source, columns)) {
    stats.rows += 1;
    heartbeat(stats.rows);
    const normalized = record.error ? { ok: false as const, reason: record.error } : domainFromWebsite(record.raw);
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
    const after = watermarks.marks.get(domain) ?? since ?? '';
    let group = groups.get(after);
    if (!group) {
      group = [];
      groups.set(after, group);
    }
    group.push(domain);
  }
  if (stats.rows === 0) throw inputFailure(`watchlist ${request.watchlist} has no data rows`);

  const batches = planBatches(groups, batchSize);
  const pending = new Set<Promise<void>>();
  for (const batch of batches) {
    const write = out.writeText(pushBatchKey(run, batch.index), JSON.stringify(batch), {
      contentType: 'application/json',
    });
    const tracked = write.finally(() => pending.delete(tracked));
    pending.add(tracked);
    if (pending.size >= PENDING_WRITES) await Promise.race(pending);
    heartbeat(stats.rows);
  }
  await Promise.all(pending);

  const plan: StoredPlan = {
    rows: stats.rows,
    distinct: seen.size,
    duplicates: stats.duplicates,
    invalid: stats.invalid,
    batches: batches.length,
    groups: groups.size,
    watermarksFrom: watermarks.runId,
    watchlist: request.watchlist,
    since,
    planned_at: new Date().toISOString(),
    invalid_rows: invalidRows,
  };
  await out.writeText(planKey(run), `${JSON.stringify(plan, null, 2)}\n`, { contentType: 'application/json' });
  return toPlan(plan);
}

/**
 * Splits watermark groups into bulk calls: groups in watermark order (none first), domains in watchlist order,
 * at most `batchSize` per call. A call never mixes watermarks, so `detected_after` is exact for every domain.
 */
export function planBatches(groups: ReadonlyMap<string, string[]>, batchSize: number): PushBatch[] {
  const keys = [...groups.keys()].sort((a, b) => (a === '' ? -1 : b === '' ? 1 : Date.parse(a) - Date.parse(b)));
  const batches: PushBatch[] = [];
  for (const key of keys) {
    const domains = groups.get(key) ?? [];
    for (let start = 0; start < domains.length; start += batchSize) {
      batches.push({
        index: batches.length,
        detected_after: key === '' ? null : key,
        domains: domains.slice(start, start + batchSize),
      });
    }
  }
  return batches;
}

function toPlan(stored: StoredPlan): PushPlan {
  const { rows, distinct, duplicates, invalid, batches, groups, watermarksFrom } = stored;
  return { rows, distinct, duplicates, invalid, batches, groups, watermarksFrom };
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
