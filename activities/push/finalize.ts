import { mapOrdered } from '../../connectors/map-ordered.ts';
import type { Store } from '../../connectors/storage/store.ts';
import { MANIFEST_SCHEMA_VERSION } from '../../contract/manifest-schemas.ts';
import { chargedFields, endingFields, runFinalizer, scheduledRunHead } from '../run/finalize-run.ts';
import { planKey, scheduledRunMarkers, watermarksKey } from '../run/scheduled-layout.ts';
import type { UnsavedAnswers } from '../run/unsaved-answers.ts';
import { lastRunOf } from '../state/last-run.ts';
import { commitWatermarkState } from '../state/watermarks.ts';
import { readBatchRecord } from './fetch.ts';
import { pushManifestKey } from './layout.ts';
import type { StoredPlan } from './plan.ts';
import type {
  DomainOutcome,
  FinalizePushRequest,
  IncompleteDomain,
  PushBatchRecord,
  PushManifest,
  PushResult,
} from './types.ts';

const READ_CONCURRENCY = 16;
const SAMPLES = 100;
const NAMED_IN_RESULT = 20;

/** What a push run's batches recorded, added up. */
interface PushGathered {
  plan: StoredPlan;
  batches: PushManifest['batches'];
  counts: PushManifest['counts'];
  outcomes: Map<string, DomainOutcome>;
  /** The first domains left behind or unreachable (all of them counted in `counts.incomplete`). */
  incomplete: IncompleteDomain[];
  errors: PushManifest['errors'];
  parts: PushManifest['parts'];
  overlap: { signals: number; credits: number };
  calls: { total: number; first_round: number; catch_up: number };
  /** Credits of the saved answers (the unsaved ones are added when the markers are settled). */
  credits: number;
  savedCalls: Map<number, Set<string>>;
}

/**
 * Ends a run in two steps, in this order:
 * 1. writes the run's `_manifest.json` from what its batches recorded (parts, counts, credits, overlap, calls,
 *    incomplete domains, errors) and the paid calls whose answers no batch saved (their markers);
 * 2. commits each answered domain's new watermark and remembered signals to `_watermarks.json` (not for a
 *    backfill, which leaves the incremental state alone).
 * A crash between the two is repaired by running it again (both steps are idempotent; watermarks only move
 * forward). A failed batch or an error leaves its domains where they were, so the next run asks again.
 */
export const finalizePushRun = runFinalizer<FinalizePushRequest, PushGathered, undefined, PushManifest, PushResult>({
  markers: scheduledRunMarkers,
  manifestKey: ({ run }) => pushManifestKey(run),
  gather: gatherPushRun,
  write: async () => undefined,
  manifest: (store, request, gathered, _written, unsaved) => pushManifest(store, request, gathered, unsaved),
  afterManifest: (store, request, manifest, gathered) => commitPushRun(store, request, manifest, gathered),
});

/** Reads every batch record of the run and adds them up. */
async function gatherPushRun(store: Store, request: FinalizePushRequest): Promise<PushGathered> {
  const { run } = request;
  const plan = JSON.parse(await store.readText(planKey(run))) as StoredPlan;
  const total = plan.batches + request.rounds.reduce((sum, round) => sum + round.count, 0);
  const records: PushBatchRecord[] = [];
  for await (const record of mapOrdered(indexes(total), READ_CONCURRENCY, (i) => readBatchRecord(store, run, i))) {
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
    incomplete: 0,
  };
  // A later round answers again for a domain a first-round call left behind: its outcome replaces the earlier one.
  // A narrowed domain is answered by one call per type: those outcomes add up.
  const outcomes = new Map<string, DomainOutcome>();
  const narrowed = new Map<string, DomainOutcome>();
  const errors: PushManifest['errors'] = [];
  const parts: PushManifest['parts'] = [];
  const overlap = { signals: 0, credits: 0 };
  const calls = { total: 0, first_round: 0, catch_up: 0 };
  let credits = 0;
  let failed = 0;
  /** Per batch, the paid calls whose answers its record holds: their markers are settled, the others counted. */
  const savedCalls = new Map<number, Set<string>>();
  for (const record of records) {
    const c = record.counts;
    if (record.paid_calls?.length) savedCalls.set(record.index, new Set(record.paid_calls));
    if (record.round === 0) {
      counts.ok += c.ok;
      counts.not_found += c.not_found;
      counts.error += c.error;
    }
    counts.signals += c.lines;
    credits += c.credits;
    overlap.signals += record.overlap?.signals ?? 0;
    overlap.credits += record.overlap?.credits ?? 0;
    calls.total += record.calls ?? 0;
    if (record.round === 0) calls.first_round += record.calls ?? 0;
    else calls.catch_up += record.calls ?? 0;
    if (record.failed) failed += 1;
    if (record.part) parts.push({ ...record.part, table: 'lines', format: 'jsonl' }, ...(record.tables ?? []));
    for (const error of record.errors) if (errors.length < SAMPLES) errors.push(error);
    if (record.round === 2) {
      for (const [domain, outcome] of Object.entries(record.domains ?? {})) mergeNarrowed(narrowed, domain, outcome);
    } else {
      for (const [domain, outcome] of Object.entries(record.domains ?? {})) outcomes.set(domain, outcome);
    }
  }
  for (const [domain, outcome] of narrowed) outcomes.set(domain, outcome);
  counts.domains = counts.ok + counts.not_found + counts.error;
  parts.sort((a, b) => (a.key < b.key ? -1 : 1));
  const incomplete = incompleteDomains(outcomes, counts);
  return {
    plan,
    batches: { total, done: records.length, failed },
    counts,
    outcomes,
    incomplete,
    errors,
    parts,
    overlap,
    calls,
    credits,
    savedCalls,
  };
}

/** The domains a run left behind or could not reach, counted, and the first of them named. */
function incompleteDomains(
  outcomes: ReadonlyMap<string, DomainOutcome>,
  counts: PushManifest['counts'],
): IncompleteDomain[] {
  const incomplete: IncompleteDomain[] = [];
  for (const [domain, outcome] of outcomes) {
    if (!outcome.behind && outcome.missing === undefined) continue;
    counts.incomplete += 1;
    if (incomplete.length >= SAMPLES) continue;
    incomplete.push(
      outcome.behind
        ? { domain, reason: 'behind' }
        : { domain, reason: 'unreachable', ...(outcome.missing ? { missing: outcome.missing } : {}) },
    );
  }
  return incomplete;
}

/**
 * The run's manifest. Calls paid for and not saved (an answer the output refused, another attempt's answer that
 * lost the race to be saved, a call whose outcome nobody knows) are counted the way a job counts them.
 */
function pushManifest(
  store: Store,
  request: FinalizePushRequest,
  gathered: PushGathered,
  unsaved: UnsavedAnswers,
): PushManifest {
  const { run } = request;
  const { plan, counts, outcomes, overlap, calls, incomplete } = gathered;
  let status = request.status;
  if (status === 'completed' && (gathered.batches.failed > 0 || counts.incomplete > 0))
    status = 'completed_with_errors';
  const mode: PushManifest['mode'] = request.window ? 'backfill' : request.fullRefresh ? 'full_refresh' : 'incremental';
  return {
    schema_version: MANIFEST_SCHEMA_VERSION,
    ...scheduledRunHead(run, request, status),
    watchlist: request.watchlist,
    output: store.url,
    mode,
    ...(request.window ? { window: request.window } : {}),
    ...(request.lookbackMs ? { lookback_ms: request.lookbackMs } : {}),
    counts,
    ...chargedFields(gathered.credits, unsaved),
    overlap,
    calls,
    batches: gathered.batches,
    parts: gathered.parts,
    incomplete_domains: incomplete,
    errors: gathered.errors,
    invalid_rows: plan.invalid_rows,
    watermarks: {
      key: watermarksKey(run.name),
      from_run: plan.watermarksFrom,
      domains_advanced: [...outcomes.values()].filter((o) => o.through !== null).length,
      committed: mode !== 'backfill',
    },
    ...endingFields(request),
  };
}

/** Only now, with the manifest published, may the watermarks move past what this run wrote. */
async function commitPushRun(
  store: Store,
  request: FinalizePushRequest,
  manifest: PushManifest,
  gathered: PushGathered,
): Promise<PushResult> {
  const { run } = request;
  const { status, mode, counts, overlap, calls, credits_charged: credits } = manifest;
  const named = manifest.incomplete_domains.slice(0, NAMED_IN_RESULT).map((entry) => entry.domain);
  const committed = manifest.watermarks.committed
    ? await commitWatermarkState(store, run.name, run.runId, gathered.outcomes, {
        replace: mode === 'full_refresh',
        lookbackMs: request.lookbackMs ?? 0,
        lastRun: lastRunOf(run, pushManifestKey(run), manifest, {
          mode,
          signals: counts.signals,
          overlap_credits: overlap.credits,
          calls: calls.total,
          incomplete: counts.incomplete,
          incomplete_domains: named,
        }),
      })
    : { advanced: 0 };
  return {
    name: run.name,
    runId: run.runId,
    dt: run.date,
    status,
    manifestUrl: store.urlOf(pushManifestKey(run)),
    signals: counts.signals,
    credits,
    overlapCredits: overlap.credits,
    calls: calls.total,
    parts: manifest.parts.filter((part) => part.table === 'lines').length,
    domains: counts.domains,
    errors: counts.error,
    incomplete: counts.incomplete,
    incompleteDomains: named,
    watermarksAdvanced: committed.advanced,
  };
}

/** Adds one type's answer for a narrowed domain: what it pushed, and what that type still left out. */
function mergeNarrowed(narrowed: Map<string, DomainOutcome>, domain: string, outcome: DomainOutcome): void {
  const { narrow: _narrow, ...answer } = outcome;
  const previous = narrowed.get(domain);
  if (!previous) {
    narrowed.set(domain, answer);
    return;
  }
  const ids = new Set(previous.pushed.map(([id]) => id));
  previous.pushed.push(...answer.pushed.filter(([id]) => !ids.has(id)));
  if (answer.missing !== undefined) previous.missing = (previous.missing ?? 0) + answer.missing;
}

async function* indexes(count: number): AsyncGenerator<number> {
  for (let index = 0; index < count; index++) yield index;
}
