import type { Store } from '../../connectors/storage/store.ts';
import { watermarkShardKey, watermarkShardsPrefix, watermarksKey } from './layout.ts';

/**
 * Per-domain watermarks of a push: the latest `detected_at` seen for each domain, so that the next run asks only
 * for signals after it.
 *
 * Small sets live in `<name>/_watermarks.json` itself. Larger ones are written as shards under
 * `<name>/_watermarks/run-<id>/` and `_watermarks.json` points at them. Either way the commit is one atomic
 * replacement of `_watermarks.json` (the shards of a commit are written first, under a key no reader uses yet).
 *
 * Watermarks only move forward: a commit merges the run's marks into what is stored *now* with `max`, so a late
 * retry of an older run can never move a domain back.
 */

/** Domains per watermark object before the set is sharded. */
export const WATERMARK_SHARD_SIZE = 50_000;

interface WatermarkFile {
  version: 1;
  name: string;
  /** The run whose commit wrote this file. */
  run_id: string;
  updated_at: string;
  count: number;
  /** Inline marks (small sets). */
  domains?: Record<string, string>;
  /** Keys of the shard objects holding the marks (large sets). */
  shards?: string[];
}

export interface Watermarks {
  marks: Map<string, string>;
  /** The run that committed them; null when the push has none yet. */
  runId: string | null;
}

const JSON_TYPE = { contentType: 'application/json' };

export async function readWatermarks(store: Store, name: string): Promise<Watermarks> {
  const pointer = await readPointer(store, name);
  const marks = new Map<string, string>();
  if (!pointer) return { marks, runId: null };
  const add = (domains: Record<string, string> | undefined) => {
    for (const [domain, at] of Object.entries(domains ?? {})) marks.set(domain, at);
  };
  add(pointer.domains);
  for (const key of pointer.shards ?? []) {
    const shard = JSON.parse(await store.readText(key)) as { domains: Record<string, string> };
    add(shard.domains);
  }
  return { marks, runId: pointer.run_id };
}

/** Normalizes a timestamp to the one form watermarks are stored in (`2026-03-01T12:00:00.000Z`). */
export function canonicalTime(value: string): string {
  return new Date(value).toISOString();
}

/** True when `candidate` is later than `current` (or there is no current). */
export function isLater(candidate: string, current: string | undefined): boolean {
  return current === undefined || Date.parse(candidate) > Date.parse(current);
}

/**
 * Merges a run's marks into the stored watermarks (each domain keeps the later of the two) and replaces
 * `_watermarks.json` when anything moved. Returns how many domains advanced.
 */
export async function commitWatermarks(
  store: Store,
  name: string,
  runId: string,
  runMarks: ReadonlyMap<string, string>,
  shardSize = WATERMARK_SHARD_SIZE,
): Promise<{ advanced: number; count: number }> {
  const previous = await readPointer(store, name);
  const { marks } = await readWatermarks(store, name);
  let advanced = 0;
  for (const [domain, at] of runMarks) {
    if (isLater(at, marks.get(domain))) {
      marks.set(domain, canonicalTime(at));
      advanced += 1;
    }
  }
  if (advanced === 0) return { advanced, count: marks.size };

  const sorted = [...marks.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const pointer: WatermarkFile = {
    version: 1,
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
  await store.writeText(watermarksKey(name), `${JSON.stringify(pointer, null, 1)}\n`, JSON_TYPE);
  await removeStaleShards(store, name, new Set([...(pointer.shards ?? []), ...(previous?.shards ?? [])]));
  return { advanced, count: sorted.length };
}

async function readPointer(store: Store, name: string): Promise<WatermarkFile | undefined> {
  const key = watermarksKey(name);
  if (!(await store.exists(key))) return undefined;
  return JSON.parse(await store.readText(key)) as WatermarkFile;
}

/** Deletes shards that neither the new nor the previous commit uses (a reader of the previous one may be mid-read). */
async function removeStaleShards(store: Store, name: string, keep: ReadonlySet<string>): Promise<void> {
  const stale: string[] = [];
  for await (const info of store.list(watermarkShardsPrefix(name))) if (!keep.has(info.key)) stale.push(info.key);
  for (const key of stale) await store.delete(key);
}
