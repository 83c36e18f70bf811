import { mapOrdered } from '../../connectors/storage/common.ts';
import type { Store } from '../../connectors/storage/store.ts';
import { readBatchRecord } from './fetch.ts';
import { planKey, pushManifestKey, watermarksKey } from './layout.ts';
import type { StoredPlan } from './plan.ts';
import type { FinalizePushRequest, PushBatchRecord, PushManifest, PushResult } from './types.ts';
import { commitWatermarks, isLater } from './watermarks.ts';

const READ_CONCURRENCY = 16;
const ERROR_SAMPLES = 100;

/**
 * Ends a run in two steps, in this order:
 * 1. writes the run's `_manifest.json` from what its batches recorded (parts, counts, credits, errors);
 * 2. merges the newest `detected_at` of every domain written into the watermarks and replaces `_watermarks.json`.
 * A crash between the two is repaired by running it again (both steps are idempotent; watermarks only move
 * forward). A failed batch leaves its domains' watermarks where they were.
 */
export async function finalizePushRun(store: Store, request: FinalizePushRequest): Promise<PushResult> {
  const { run } = request;
  const plan = JSON.parse(await store.readText(planKey(run))) as StoredPlan;
  const records: PushBatchRecord[] = [];
  for await (const record of mapOrdered(indexes(plan.batches), READ_CONCURRENCY, (i) =>
    readBatchRecord(store, run, i),
  )) {
    if (record) records.push(record);
  }

  const counts: PushManifest['counts'] = {
    input_rows: plan.rows,
    distinct: plan.distinct,
    duplicates: plan.duplicates,
    invalid: plan.invalid,
    domains: 0,
    ok: 0,
    not_found: 0,
    error: 0,
    signals: 0,
    truncated: 0,
  };
  const marks = new Map<string, string>();
  const errors: PushManifest['errors'] = [];
  const truncated: string[] = [];
  const parts: PushManifest['parts'] = [];
  let credits = 0;
  let failed = 0;
  for (const record of records) {
    const c = record.counts;
    counts.ok += c.ok;
    counts.not_found += c.not_found;
    counts.error += c.error;
    counts.signals += c.lines;
    counts.truncated += record.truncated.length;
    credits += c.credits;
    if (record.failed) failed += 1;
    if (record.part) parts.push(record.part);
    for (const error of record.errors) if (errors.length < ERROR_SAMPLES) errors.push(error);
    for (const domain of record.truncated) if (truncated.length < ERROR_SAMPLES) truncated.push(domain);
    for (const [domain, at] of Object.entries(record.marks)) if (isLater(at, marks.get(domain))) marks.set(domain, at);
  }
  counts.domains = counts.ok + counts.not_found + counts.error;
  parts.sort((a, b) => (a.key < b.key ? -1 : 1));

  const status = request.status === 'completed' && failed > 0 ? 'completed_with_errors' : request.status;
  const manifest: PushManifest = {
    name: run.name,
    run_id: run.runId,
    dt: run.date,
    scheduled_at: request.scheduledAt,
    started_at: request.startedAt,
    finished_at: new Date().toISOString(),
    status,
    watchlist: request.watchlist,
    counts,
    credits_charged: credits,
    batches: { total: plan.batches, done: records.length, failed },
    parts,
    truncated_domains: truncated,
    errors,
    invalid_rows: plan.invalid_rows,
    watermarks: { key: watermarksKey(run.name), from_run: plan.watermarksFrom, domains_advanced: 0 },
    ...(request.error ? { error: request.error } : {}),
    ...(request.details ? { details: request.details } : {}),
  };
  // How many domains this run moves forward, against the watermarks it planned from (known before the commit).
  manifest.watermarks.domains_advanced = marks.size;
  await store.writeText(pushManifestKey(run), `${JSON.stringify(manifest, null, 2)}\n`, {
    contentType: 'application/json',
  });

  // Only now, with the manifest published, may the watermarks move past what this run wrote.
  const committed = await commitWatermarks(store, run.name, run.runId, marks);
  return {
    name: run.name,
    runId: run.runId,
    dt: run.date,
    status,
    manifestUrl: store.urlOf(pushManifestKey(run)),
    signals: counts.signals,
    credits,
    parts: parts.length,
    domains: counts.domains,
    errors: counts.error,
    watermarksAdvanced: committed.advanced,
  };
}

async function* indexes(count: number): AsyncGenerator<number> {
  for (let index = 0; index < count; index++) yield index;
}
