import type { Store } from '../../connectors/storage/store.ts';
import { readJsonIfPresent } from '../../connectors/storage/store-io.ts';
import type { FeedKind } from '../../contract/kinds.ts';
import { MANIFEST_SCHEMA_VERSION } from '../../contract/manifest-schemas.ts';
import { FEED_TABLES, feedRow } from '../../contract/tables/feeds.ts';
import { chargedFields, endingFields, runFinalizer, scheduledRunHead } from '../run/finalize-run.ts';
import { encodeTableParts, readPartLines, storedPart, writePart, writeTableParts, zeroCounts } from '../run/parts.ts';
import { answerKey, planKey, scheduledRunMarkers, watermarksKey } from '../run/scheduled-layout.ts';
import type { ManifestPart } from '../run/types.ts';
import type { UnsavedAnswers } from '../run/unsaved-answers.ts';
import { lastRunOf } from '../state/last-run.ts';
import { clearStoppedFeedRun, recordStoppedFeedRun, type StoppedFeedRun } from '../state/stopped-run.ts';
import {
  canonicalTime,
  commitWatermarkState,
  type KeyOutcome,
  readWatermarkState,
  type WatermarkState,
} from '../state/watermarks.ts';
import { feedAnswerIdentity, type SavedAnswer } from './fetch.ts';
import { feedDir, feedManifestKey, feedPartKey, feedTablePartKey } from './layout.ts';
import { feedHash } from './plan.ts';
import type { FeedManifest, FeedPlan, FeedResult, FinalizeFeedRequest } from './types.ts';

/** Lines per part of a feed run. */
export const FEED_PART_LINES = 10_000;

interface Found {
  key: string;
  item: Record<string, unknown>;
  /** When its newest matching signal was detected (search), or null (buyer intent has no time). */
  at: string | null;
  signalId: string | null;
}

/** What a feed run's saved answers hold, merged. */
interface FeedGathered {
  plan: FeedPlan;
  state: WatermarkState;
  /** One entry per distinct company or contact: of repeats across slices, the one with the newest signal. */
  found: Map<string, Found>;
  returned: number;
  /** Credits of the saved answers (the unsaved ones are added when the markers are settled). */
  credits: number;
  calls: number;
  split: number;
  savedCalls: Map<number, Set<string>>;
}

/** What a feed run delivers: the entries earlier runs did not, and their parts. */
interface FeedWritten {
  fresh: Found[];
  parts: ManifestPart[];
}

/**
 * Ends a feed run, in this order: merges the run's saved answers (one line per distinct company or contact; of
 * repeats across slices, the one with the newest signal), drops what earlier runs delivered (by the state's key and
 * newest signal id), writes the new ones as parts, then the manifest, and only then commits the state. Every step is
 * idempotent: a crash in between is repaired by running it again.
 */
export const finalizeFeedRun = runFinalizer<FinalizeFeedRequest, FeedGathered, FeedWritten, FeedManifest, FeedResult>({
  markers: scheduledRunMarkers,
  manifestKey: ({ run }) => feedManifestKey(run),
  gather: gatherFeedRun,
  write: writeFeedParts,
  manifest: feedManifest,
  afterManifest: commitFeedRun,
});

/** Reads every saved answer of the run and merges what they found. */
async function gatherFeedRun(store: Store, request: FinalizeFeedRequest): Promise<FeedGathered> {
  const { run } = request;
  const plan = (await readJsonIfPresent<FeedPlan>(store, planKey(run))) ?? {
    detected_after: null,
    state_from: null,
    known: 0,
  };
  const state = await readWatermarkState(store, run.name);
  const found = new Map<string, Found>();
  let returned = 0;
  let credits = 0;
  let calls = 0;
  let split = 0;
  /** Per call, the paid call whose answer is saved: its marker is settled, the others counted as unsaved. */
  const savedCalls = new Map<number, Set<string>>();
  for (let index = 0; index < request.calls; index++) {
    const answer = await readAnswer(store, run, index, savedCalls);
    if (!answer) continue;
    calls += 1;
    credits += answer.credits;
    returned += answer.count;
    if (answer.capped) split += 1;
    for (const item of answer.items) {
      const entry = identify(run.kind, item);
      const previous = found.get(entry.key);
      if (!previous || (entry.at !== null && previous.at !== null && Date.parse(entry.at) > Date.parse(previous.at))) {
        found.set(entry.key, entry);
      }
    }
  }
  return { plan, state, found, returned, credits, calls, split, savedCalls };
}

/** Writes what earlier runs did not deliver as parts: the flat table in each of the run's formats, then the lines. */
async function writeFeedParts(
  store: Store,
  request: FinalizeFeedRequest,
  gathered: FeedGathered,
): Promise<FeedWritten> {
  const { run } = request;
  const fresh: Found[] = [];
  for (const entry of gathered.found.values()) if (isNew(entry, gathered.state)) fresh.push(entry);
  fresh.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));

  const dir = feedDir(run.kind);
  const parts: ManifestPart[] = [];
  for (let first = 0, index = 0; first < fresh.length; first += FEED_PART_LINES, index++) {
    const slice = fresh.slice(first, first + FEED_PART_LINES);
    const lines = slice.map((entry) => ({ key: entry.key, ...entry.item }));
    const key = feedPartKey(run, index, request.compression);
    const counts = { ...zeroCounts(), lines: lines.length, ok: lines.length };
    // Written whole each time the run ends (never reused): its identity only names whose part it is.
    const identity = { owner: `${run.name}/run-${run.runId}`, options: '', index };
    // The flat table first, in each of the run's formats (none without `--format`), then the lines.
    const tables = encodeTableParts(
      {
        formats: run.formats ?? [],
        compression: request.compression,
        keyOf: (_table, format) => feedTablePartKey(run, index, format, request.compression),
      },
      [{ def: FEED_TABLES[dir], rows: slice.map((entry) => feedRow(dir, entry.key, entry.item)) }],
    );
    const written = await writeTableParts(store, tables, 'done', identity);
    const stored = await writePart(store, request.compression, key, lines, counts, 'done', [], identity);
    parts.push(
      { key, lines: lines.length, bytes: stored.bytes, sha256: stored.sha256, table: 'lines', format: 'jsonl' },
      ...written,
    );
  }
  return { fresh, parts };
}

function feedManifest(
  store: Store,
  request: FinalizeFeedRequest,
  gathered: FeedGathered,
  written: FeedWritten,
  unsaved: UnsavedAnswers,
): FeedManifest {
  const { run } = request;
  const { plan, found, calls } = gathered;
  const { fresh } = written;
  let status = request.status;
  if (status === 'completed' && request.incomplete.length > 0) status = 'completed_with_errors';
  return {
    schema_version: MANIFEST_SCHEMA_VERSION,
    kind: run.kind,
    ...scheduledRunHead(run, request, status),
    output: store.url,
    filters: request.filters,
    detected_after: plan.detected_after,
    counts: {
      returned: gathered.returned,
      distinct: found.size,
      new: fresh.length,
      already_delivered: found.size - fresh.length,
    },
    ...chargedFields(gathered.credits, unsaved),
    calls,
    ...(run.kind === 'intent-contacts' ? {} : { slices: { total: calls, split: gathered.split } }),
    incomplete: request.incomplete.slice(0, 100),
    parts: written.parts,
    state: { key: watermarksKey(run.name), from_run: plan.state_from, keys_advanced: fresh.length },
    ...endingFields(request),
  };
}

/**
 * Only now, with the manifest published, may the state say these were delivered. A run that stopped (an output
 * that refuses writes) leaves the state alone and is recorded as stopped: the next run of the feed resumes it
 * (plan.ts `stoppedFeedRun`), answered from what it saved and the worker's spool, writes this folder again whole
 * and commits it (committed now, the resumed run would take these lines as delivered, and would skip the older
 * matches of the questions this run never asked).
 */
async function commitFeedRun(
  store: Store,
  request: FinalizeFeedRequest,
  manifest: FeedManifest,
  gathered: FeedGathered,
  written: FeedWritten,
): Promise<FeedResult> {
  const { run } = request;
  const { status, calls } = manifest;
  const { fresh } = written;
  const outcomes = new Map<string, KeyOutcome>();
  for (const entry of fresh) {
    outcomes.set(entry.key, {
      through: entry.at ?? request.scheduledAt,
      pushed: entry.signalId && entry.at ? [[entry.signalId, canonicalTime(entry.at)]] : [],
    });
  }
  if (status === 'failed') {
    const stopped: StoppedFeedRun = {
      run_id: run.runId,
      scheduled_at: request.scheduledAt,
      state_from: gathered.plan.state_from,
      feed: feedHash(run.kind, request.filters),
    };
    await recordStoppedFeedRun(store, run.name, stopped);
  } else if (outcomes.size > 0 || gathered.state.runId === null) {
    const did = { mode: run.kind, signals: fresh.length, calls, incomplete: request.incomplete.length };
    await commitWatermarkState(store, run.name, run.runId, outcomes, {
      lastRun: lastRunOf(run, feedManifestKey(run), manifest, did),
    });
  }
  // Finished (this run, or a stopped one it resumed): no later run resumes it.
  if (status !== 'failed') await clearStoppedFeedRun(store, run.name);
  return {
    name: run.name,
    kind: run.kind,
    runId: run.runId,
    dt: run.date,
    status,
    manifestUrl: store.urlOf(feedManifestKey(run)),
    new: fresh.length,
    returned: gathered.returned,
    credits: manifest.credits_charged,
    calls,
    parts: manifest.parts.filter((part) => part.table === 'lines').length,
    incomplete: request.incomplete.length,
    incompleteBy: incompleteReasons(request.incomplete),
  };
}

/** How many slices (or pages) were left for each reason. */
function incompleteReasons(slices: FinalizeFeedRequest['incomplete']): FeedResult['incompleteBy'] {
  const by: NonNullable<FeedResult['incompleteBy']> = {};
  for (const { reason } of slices) by[reason] = (by[reason] ?? 0) + 1;
  return by;
}

/**
 * A call's saved answer, with the paid call it holds added to `savedCalls` when its metadata proves whose it is.
 * Answers saved before they carried metadata are read all the same (they name no call).
 */
async function readAnswer(
  store: Store,
  run: FinalizeFeedRequest['run'],
  index: number,
  savedCalls: Map<number, Set<string>>,
): Promise<SavedAnswer | undefined> {
  const key = answerKey(run, index);
  const info = await store.stat(key);
  if (!info) return undefined;
  const [answer] = await readPartLines<SavedAnswer>(store, key).catch(() => []);
  if (!answer || !Array.isArray(answer.items)) return undefined;
  if (answer.question !== undefined) {
    const proven = storedPart(info, { ...feedAnswerIdentity(run, index, null), options: answer.question });
    if (proven.part?.calls.length) savedCalls.set(index, new Set(proven.part.calls));
  }
  return answer;
}

/** Delivered before: the same key with the same newest signal (or, for buyer intent, the key at all). */
function isNew(entry: Found, state: WatermarkState): boolean {
  const mark = state.marks.get(entry.key);
  if (mark === undefined) return true;
  if (entry.at === null) return false;
  const at = Date.parse(entry.at);
  if (at > Date.parse(mark)) return true;
  if (at < Date.parse(mark)) return false;
  const ids = state.pushed.get(entry.key) ?? [];
  return entry.signalId !== null && !ids.some(([id]) => id === entry.signalId);
}

/** The state key of an item: a company's domain; a contact's email, else LinkedIn URL, else name at employer. */
export function identify(kind: FeedKind, item: Record<string, unknown>): Found {
  const text = (value: unknown) => (typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined);
  const at = text(item['latest_signal_at']) ?? null;
  const signalId = text(item['latest_signal_id']) ?? null;
  if (kind === 'company-search') {
    return { key: `domain:${String(item['domain']).toLowerCase()}`, item, at, signalId };
  }
  const contact = (item['contact'] ?? {}) as Record<string, unknown>;
  const company = (item['company'] ?? {}) as Record<string, unknown>;
  const email = text(contact['email'])?.toLowerCase();
  const linkedin = text(contact['linkedin_url'])
    ?.toLowerCase()
    .replace(/^https?:\/\/(www\.)?/, '')
    .replace(/\/+$/, '');
  const name = [contact['first_name'], contact['last_name']].filter((part) => typeof part === 'string').join(' ');
  const person = email
    ? `email:${email}`
    : linkedin
      ? `linkedin:${linkedin}`
      : `name:${(text(contact['full_name']) ?? name).toLowerCase()}@${String(company['domain'] ?? '').toLowerCase()}`;
  if (kind === 'intent-contacts')
    return { key: `${String(item['topic_id'])}|${person}`, item, at: null, signalId: null };
  return { key: person, item, at, signalId };
}
