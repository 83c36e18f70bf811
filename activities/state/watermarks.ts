import type { Store } from '../../connectors/storage/store.ts';
import { readJsonIfPresent } from '../../connectors/storage/store-io.ts';
import { watermarkShardKey, watermarkShardsPrefix, watermarksKey } from '../run/scheduled-layout.ts';
import type { LastRun } from './last-run.ts';

/**
 * The incremental state of a scheduled run (`<name>/_watermarks.json`), the same for a push and a feed: for each key
 * (a push's domain, a feed's company or contact) the time it is complete through (its watermark: what was detected
 * at or before it has been delivered), the delivered signals a later call may return again, and the last run.
 *
 * A push's watermark is not the newest signal of its domain but the newest signal of the whole bulk call that
 * answered it (the service answered every domain of that call at one instant that was at least that late); a feed's
 * is the newest signal it delivered of that company or contact.
 *
 * Large sets of watermarks live in shards under `<name>/_watermarks/run-<id>/`; `_watermarks.json` points at them.
 * Either way a commit is one atomic replacement of `_watermarks.json`. Watermarks only move forward, except by an
 * explicit reset or a full refresh.
 */

/** Domains per watermark object before the set is sharded. */
export const WATERMARK_SHARD_SIZE = 50_000;

/** `[signal_id, detected_at]` of a signal already delivered, kept to drop it when a later call returns it again. */
export type DeliveredId = [string, string];

/** What a run established for one key: what the state keeps of it. */
export interface KeyOutcome {
  /** The new complete-through time (never earlier than the key's previous one). */
  through: string | null;
  /** Delivered signals to remember (above `through` or inside the lookback window). */
  pushed: DeliveredId[];
  /** Lookback: the time after which `pushed` holds every signal delivered, so that a start this low repeats none. */
  cover?: string;
}

interface StateFile {
  version: 1 | 2;
  name: string;
  /** The run whose commit wrote this file (or `reset-…`). */
  run_id: string;
  updated_at: string;
  count: number;
  /** Inline watermarks (small sets). */
  domains?: Record<string, string>;
  /** Keys of the shard objects holding the watermarks (large sets). */
  shards?: string[];
  /** key → delivered signals a later call may return again (`pushed`: the name the file has always had). */
  pushed?: Record<string, DeliveredId[]>;
  /** The lookback of the run that committed (how far below the watermarks signals are remembered). */
  lookback_ms?: number;
  /** key → time after which every delivered signal is remembered (only while a lookback is on). */
  covered?: Record<string, string>;
  last_run?: LastRun;
}

export interface WatermarkState {
  marks: Map<string, string>;
  pushed: Map<string, DeliveredId[]>;
  /** key → time after which every delivered signal is in `pushed` (a lookback may start there). */
  covered: Map<string, string>;
  /** The run that committed them; null when the schedule has none yet. */
  runId: string | null;
  /** How far below each watermark the remembered signals reach (0: only above it). */
  lookbackMs: number;
  lastRun?: LastRun;
}

const JSON_TYPE = { contentType: 'application/json' };

export async function readWatermarkState(store: Store, name: string): Promise<WatermarkState> {
  const pointer = await readPointer(store, name);
  const marks = new Map<string, string>();
  const pushed = new Map<string, DeliveredId[]>();
  const covered = new Map<string, string>();
  if (!pointer) return { marks, pushed, covered, runId: null, lookbackMs: 0 };
  const add = (domains: Record<string, string> | undefined) => {
    for (const [domain, at] of Object.entries(domains ?? {})) marks.set(domain, at);
  };
  add(pointer.domains);
  for (const key of pointer.shards ?? []) {
    const shard = JSON.parse(await store.readText(key)) as { domains: Record<string, string> };
    add(shard.domains);
  }
  for (const [domain, ids] of Object.entries(pointer.pushed ?? {})) pushed.set(domain, ids);
  for (const [domain, at] of Object.entries(pointer.covered ?? {})) covered.set(domain, at);
  return {
    marks,
    pushed,
    covered,
    runId: pointer.run_id,
    lookbackMs: pointer.lookback_ms ?? 0,
    ...(pointer.last_run ? { lastRun: pointer.last_run } : {}),
  };
}

/** Normalizes a timestamp to the one form watermarks are stored in (`2026-03-01T12:00:00.000Z`). */
export function canonicalTime(value: string): string {
  return new Date(value).toISOString();
}

/** True when `candidate` is later than `current` (or there is no current). */
export function isLater(candidate: string, current: string | null | undefined): boolean {
  return current == null || Date.parse(candidate) > Date.parse(current);
}

/**
 * Merges a run's outcomes into the stored state: each key keeps the later of its two watermarks and the run's list
 * of delivered signals. `replace` (a full refresh) drops every key the run did not answer. Returns how many
 * watermarks moved.
 */
export async function commitWatermarkState(
  store: Store,
  name: string,
  runId: string,
  outcomes: ReadonlyMap<string, KeyOutcome>,
  options: { replace?: boolean; lastRun?: LastRun; shardSize?: number; lookbackMs?: number } = {},
): Promise<{ advanced: number; count: number }> {
  const current = options.replace
    ? { marks: new Map<string, string>(), pushed: new Map<string, DeliveredId[]>(), covered: new Map<string, string>() }
    : await readWatermarkState(store, name);
  const { marks, pushed, covered } = current;
  let advanced = 0;
  for (const [key, outcome] of outcomes) {
    if (outcome.through !== null && isLater(outcome.through, marks.get(key))) {
      marks.set(key, canonicalTime(outcome.through));
      advanced += 1;
    }
    if (outcome.pushed.length > 0) pushed.set(key, outcome.pushed);
    else pushed.delete(key);
    if (outcome.cover !== undefined) covered.set(key, outcome.cover);
    else covered.delete(key);
  }
  await writeState(store, name, runId, { marks, pushed, covered, lookbackMs: options.lookbackMs ?? 0 }, options);
  return { advanced, count: marks.size };
}

/** Forgets the watermarks of `keys` (all when absent): their next run asks from `since` again. */
export async function resetWatermarkState(
  store: Store,
  name: string,
  keys?: readonly string[],
): Promise<{ removed: number; remaining: number }> {
  const state = await readWatermarkState(store, name);
  const before = state.marks.size;
  if (keys === undefined) {
    state.marks.clear();
    state.pushed.clear();
    state.covered.clear();
  } else {
    for (const key of keys) {
      state.marks.delete(key);
      state.pushed.delete(key);
      state.covered.delete(key);
    }
  }
  const stamp = new Date().toISOString().replace(/[-:.]/g, '');
  await writeState(store, name, `reset-${stamp}`, state, state.lastRun ? { lastRun: state.lastRun } : {});
  return { removed: before - state.marks.size, remaining: state.marks.size };
}

async function writeState(
  store: Store,
  name: string,
  runId: string,
  state: Pick<WatermarkState, 'marks' | 'pushed' | 'covered' | 'lookbackMs'>,
  options: { lastRun?: LastRun; shardSize?: number },
): Promise<void> {
  const { marks, pushed } = state;
  const { lastRun, shardSize = WATERMARK_SHARD_SIZE } = options;
  const previous = await readPointer(store, name);
  const sorted = [...marks.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const pointer: StateFile = {
    version: 2,
    name,
    run_id: runId,
    updated_at: new Date().toISOString(),
    count: sorted.length,
  };
  if (sorted.length <= shardSize) {
    pointer.domains = Object.fromEntries(sorted);
  } else {
    pointer.shards = [];
    for (let shard = 0; shard * shardSize < sorted.length; shard++) {
      const key = watermarkShardKey(name, runId, shard);
      const domains = Object.fromEntries(sorted.slice(shard * shardSize, (shard + 1) * shardSize));
      await store.writeText(key, JSON.stringify({ domains }), JSON_TYPE);
      pointer.shards.push(key);
    }
  }
  if (pushed.size > 0) pointer.pushed = Object.fromEntries(pushed);
  if (state.lookbackMs > 0) pointer.lookback_ms = state.lookbackMs;
  if (state.covered.size > 0) pointer.covered = Object.fromEntries(state.covered);
  if (lastRun) pointer.last_run = lastRun;
  await store.writeText(watermarksKey(name), `${JSON.stringify(pointer, null, 1)}\n`, JSON_TYPE);
  await removeStaleShards(store, name, new Set([...(pointer.shards ?? []), ...(previous?.shards ?? [])]));
}

async function readPointer(store: Store, name: string): Promise<StateFile | undefined> {
  return readJsonIfPresent<StateFile>(store, watermarksKey(name));
}

/** Deletes shards that neither the new nor the previous commit uses (a reader of the previous one may be mid-read). */
async function removeStaleShards(store: Store, name: string, keep: ReadonlySet<string>): Promise<void> {
  const stale: string[] = [];
  for await (const info of store.list(watermarkShardsPrefix(name))) if (!keep.has(info.key)) stale.push(info.key);
  for (const key of stale) await store.delete(key);
}
