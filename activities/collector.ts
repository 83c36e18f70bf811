/**
 * Activities of the bucket collector (see workflows/bucket-collector.ts).
 *
 * Claim-check: an event travels to the collector as its signal id only. `forwardToCollector` first stages the event
 * under `<prefix>/collector/<dest>/staging/<signal id>.json`, then signals (or starts) the destination's collector
 * with the id. `writeCollectorPart` later reads the staged events of one part and publishes
 * `<prefix>/collector/<dest>/part-<seq>.jsonl` (atomic, with its count and checksum in the object's metadata),
 * upserts the part in `_manifest.json`, and removes the staged events. `seq` is the collector's own counter, so a
 * retried or replayed write lands on the same key and overwrites instead of duplicating; a part that already exists
 * is not written again.
 */

import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { z } from 'zod';
import { FAILURE_TYPE } from '../connectors/errors.ts';
import type { Store } from '../connectors/storage/store.ts';
import { type BucketDestination, collectorWorkflowId } from '../connectors/webhooks/destinations.ts';
import type { SignalCreatedEvent } from '../connectors/webhooks/events.ts';
import type { ManifestClaims } from '../contract/manifest-place.ts';
import { readPlacedManifest } from '../contract/manifest-read.ts';
import { SIGNALS_TABLE, signalRow } from '../contract/tables/signals.ts';
import type { ManifestPart } from './jobs/types.ts';
import {
  encodeTableParts,
  type PartIdentity,
  readPart,
  storedSignalTableParts,
  writeManifest,
  writePart,
  writeTableParts,
  zeroCounts,
} from './run/parts.ts';
import { tableExtension } from './tables/formats.ts';
import type { WebhookActivityBaseDeps } from './webhook-delivery.ts';
import {
  collectorManifestKey,
  collectorPartKey,
  collectorStagingKey,
  collectorTablePartKey,
} from './webhook-layout.ts';

export interface CollectorActivityDeps extends WebhookActivityBaseDeps {
  /** For signalWithStart; default: the activity context's client. */
  temporalClient?: Client;
  /** Task queue of the collector workflows; default: the queue of the calling activity. */
  collectorTaskQueue?: string;
}

/** The collector's workflow input (kept in sync with workflows/bucket-collector.ts). */
export interface CollectorStartArgs {
  destinationId: string;
  maxEvents: number;
  maxAgeMs: number;
}

export interface CollectorPart {
  seq: number;
  key: string;
  count: number;
  bytes: number;
  sha256: string;
  first_signal_id?: string;
  last_signal_id?: string;
  /** Signal ids whose staged event was gone when the part was written (never silently dropped). */
  missing?: string[];
  /** The part as a flat signals table, one per format of the destination's `formats`. */
  tables?: ManifestPart[];
  written_at: string;
}

export interface CollectorManifest {
  destination_id: string;
  /** The output URL written under: every part's `key` is relative to it. */
  output: string;
  parts: CollectorPart[];
  events: number;
  updated_at: string;
}

export interface ForwardToCollectorInput {
  destinationId: string;
  event: SignalCreatedEvent;
}

export interface WriteCollectorPartInput {
  destinationId: string;
  seq: number;
  signalIds: string[];
}

const STAGING_READ_CONCURRENCY = 16;

function bucket(config: CollectorActivityDeps['config'], id: string): BucketDestination {
  const d = config.destinations.find((x): x is BucketDestination => x.id === id && x.kind === 'bucket');
  if (!d) {
    throw ApplicationFailure.nonRetryable(
      `no bucket webhook destination "${id}" in this worker's configuration`,
      FAILURE_TYPE.destinationNotConfigured,
    );
  }
  return d;
}

/**
 * A collector's manifest grows by a part every rotation for as long as the destination lives (about 250 bytes a part,
 * more with tables): read up to this, far past a job's manifest cap, so a long-lived destination keeps its list.
 */
const COLLECTOR_MANIFEST_READ_LIMIT_BYTES = 256 * 1024 * 1024;

/** The collector's manifest as read back: its own fields checked, the rest kept as written. */
const CollectorManifestSchema = z.looseObject({
  destination_id: z.string(),
  output: z.string(),
  parts: z.array(
    z.looseObject({
      seq: z.number().int().nonnegative(),
      key: z.string(),
      tables: z.array(z.looseObject({ key: z.string() })).optional(),
    }),
  ),
});

/** A collector's manifest lies in its destination's folder, and every part and table it lists in that folder. */
function collectorClaims(dest: BucketDestination) {
  return (manifest: z.output<typeof CollectorManifestSchema>): ManifestClaims => {
    const folder = collectorManifestKey({ ...dest, id: manifest.destination_id }).replace(/\/_manifest\.json$/, '');
    return {
      folder,
      folderField: 'destination_id',
      depth: collectorManifestKey(dest).split('/').length - 1,
      output: manifest.output,
      parts: manifest.parts,
      listed: manifest.parts.flatMap((part, i) =>
        (part.tables ?? []).map((table, t) => ({ field: `parts.${i}.tables.${t}.key`, key: table.key })),
      ),
    };
  };
}

/**
 * The destination's manifest, believed only when it is the collector's own in its own place; one that is not (not
 * JSON, another destination's, a part outside its folder) is written over, listing the parts written from now on.
 */
async function readManifest(store: Store, dest: BucketDestination): Promise<CollectorManifest> {
  const read = await readPlacedManifest(
    store,
    collectorManifestKey(dest),
    CollectorManifestSchema,
    collectorClaims(dest),
    COLLECTOR_MANIFEST_READ_LIMIT_BYTES,
  );
  return (
    (read?.manifest as CollectorManifest | undefined) ?? {
      destination_id: dest.id,
      output: store.url,
      parts: [],
      events: 0,
      updated_at: '',
    }
  );
}

async function readStaged(store: Store, dest: BucketDestination, ids: string[]) {
  const events: Array<string | undefined> = new Array(ids.length);
  let next = 0;
  const worker = async () => {
    while (next < ids.length) {
      const i = next++;
      const key = collectorStagingKey(dest, ids[i]!);
      events[i] = (await store.exists(key)) ? (await store.readText(key)).trim() : undefined;
    }
  };
  await Promise.all(Array.from({ length: Math.min(STAGING_READ_CONCURRENCY, ids.length) }, worker));
  return events;
}

/** Stages the event and hands its id to the destination's collector (started on first use). */
export async function forwardToCollector(
  deps: CollectorActivityDeps,
  input: ForwardToCollectorInput,
): Promise<{ workflowId: string; stagingKey: string }> {
  const dest = bucket(deps.config, input.destinationId);
  const store = deps.openStore(dest.url);
  const stagingKey = collectorStagingKey(dest, input.event.signal.id);
  await store.writeText(stagingKey, `${JSON.stringify(input.event)}\n`, { contentType: 'application/json' });
  const client = deps.temporalClient ?? Context.current().client;
  const taskQueue = deps.collectorTaskQueue ?? Context.current().info.taskQueue;
  const workflowId = collectorWorkflowId(dest.id);
  const args: CollectorStartArgs = {
    destinationId: dest.id,
    maxEvents: dest.max_events,
    maxAgeMs: dest.max_age_ms,
  };
  await client.workflow.signalWithStart('bucketCollector', {
    workflowId,
    taskQueue,
    args: [args],
    signal: 'collectEvent',
    signalArgs: [{ signalId: input.event.signal.id }],
  });
  return { workflowId, stagingKey };
}

/** Publishes part `seq` from the staged events, then the manifest, then clears the staging. Idempotent. */
export async function writeCollectorPart(
  deps: CollectorActivityDeps,
  input: WriteCollectorPartInput,
): Promise<CollectorPart> {
  const now = deps.now ?? (() => new Date());
  const dest = bucket(deps.config, input.destinationId);
  const store = deps.openStore(dest.url);
  const key = collectorPartKey(dest, input.seq);
  let part: CollectorPart;

  const identity = { owner: dest.id, options: '', index: input.seq };
  // A part that does not prove itself (another destination's, cut short, its metadata spoiled) is written again.
  const existing = (await readPart(store, key, identity)).part;
  if (existing) {
    // Written by an earlier try of this very part: keep it, finish the bookkeeping.
    const manifest = await readManifest(store, dest);
    const tables = await storedTables(store, dest, input.seq, identity);
    part = manifest.parts.find((p) => p.seq === input.seq) ?? {
      seq: input.seq,
      key,
      count: existing.counts.lines,
      bytes: existing.bytes,
      sha256: existing.sha256,
      ...(tables.length ? { tables } : {}),
      written_at: now().toISOString(),
    };
  } else {
    const staged = await readStaged(store, dest, input.signalIds);
    const lines: unknown[] = [];
    const present: string[] = [];
    const missing: string[] = [];
    staged.forEach((text, i) => {
      if (text === undefined) missing.push(input.signalIds[i]!);
      else {
        lines.push(JSON.parse(text));
        present.push(input.signalIds[i]!);
      }
    });
    const counts = { ...zeroCounts(), lines: lines.length, ok: lines.length };
    // The flat table first: the part is what a retry finds written.
    const tables = await writeTableParts(
      store,
      collectorTables(dest, input.seq, lines as SignalCreatedEvent[]),
      'done',
      identity,
    );
    const stored = await writePart(store, 'none', key, lines, counts, 'done', [], identity);
    part = {
      seq: input.seq,
      key,
      count: lines.length,
      bytes: stored.bytes,
      sha256: stored.sha256,
      ...(present.length ? { first_signal_id: present[0]!, last_signal_id: present.at(-1)! } : {}),
      ...(missing.length ? { missing } : {}),
      ...(tables.length ? { tables } : {}),
      written_at: now().toISOString(),
    };
  }

  const manifest = await readManifest(store, dest);
  const parts = manifest.parts.filter((p) => p.seq !== part.seq);
  parts.push(part);
  parts.sort((a, b) => a.seq - b.seq);
  const next: CollectorManifest = {
    destination_id: dest.id,
    output: store.url,
    parts,
    events: parts.reduce((n, p) => n + p.count, 0),
    updated_at: now().toISOString(),
  };
  await writeManifest(store, collectorManifestKey(dest), next);
  await Promise.all(input.signalIds.map((id) => store.delete(collectorStagingKey(dest, id))));
  return part;
}

/** The collector's activities as the worker registers them. */
export function createCollectorActivities(deps: CollectorActivityDeps) {
  return {
    forwardToCollector: (input: ForwardToCollectorInput) => forwardToCollector(deps, input),
    writeCollectorPart: (input: WriteCollectorPartInput) => writeCollectorPart(deps, input),
  };
}

export type CollectorActivities = ReturnType<typeof createCollectorActivities>;

/** A part's table parts as stored (written before the part, so present when the part is). */
function storedTables(store: Store, dest: BucketDestination, seq: number, identity: PartIdentity) {
  return storedSignalTableParts(store, dest.formats, identity, (format) =>
    collectorTablePartKey(dest, seq, tableExtension(format, 'none')),
  );
}

/** A collector part's events as the flat signals table, in each of the destination's formats. */
function collectorTables(dest: BucketDestination, seq: number, events: readonly SignalCreatedEvent[]) {
  if (dest.formats.length === 0) return [];
  const rows = events.map(({ signal }) =>
    signalRow(
      {
        signal_id: signal.id,
        signal_type: signal.type,
        signal_name: signal.title,
        detected_at: signal.detected_at,
        company: signal.company,
        data: signal.data,
      },
      { record_id: null, row: null, domain: signal.company.domain },
    ),
  );
  const output = {
    formats: dest.formats,
    compression: 'none' as const,
    keyOf: (_table: string, format: (typeof dest.formats)[number]) =>
      collectorTablePartKey(dest, seq, tableExtension(format, 'none')),
  };
  return encodeTableParts(output, [{ def: SIGNALS_TABLE, rows }]);
}
