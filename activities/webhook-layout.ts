/**
 * Where the webhook activities keep what they write, relative to a destination's bucket or the dead-letter location:
 * the collector's parts, tables, manifest and staged events, dead letters, and each HTTP destination's state. The
 * names are deterministic, so a retried activity overwrites its own object instead of adding one.
 */
import type { BucketDestination } from '../connectors/webhooks/destinations.ts';

function collectorBase(d: BucketDestination): string {
  return `${d.prefix ? `${d.prefix}/` : ''}collector/${d.id}`;
}

/** `<prefix>/collector/<dest>/part-00042.jsonl`: the collector's own sequence number, so a replay overwrites. */
export function collectorPartKey(d: BucketDestination, seq: number): string {
  return `${collectorBase(d)}/part-${String(seq).padStart(5, '0')}.jsonl`;
}

/** `<prefix>/collector/<dest>/tables/signals/part-00042.parquet`: part 42 as a flat signals table. */
export function collectorTablePartKey(d: BucketDestination, seq: number, extension: string): string {
  return `${collectorBase(d)}/tables/signals/part-${String(seq).padStart(5, '0')}${extension}`;
}

export function collectorManifestKey(d: BucketDestination): string {
  return `${collectorBase(d)}/_manifest.json`;
}

/** Where an event waits (claim-check) between its workflow and the collector's next part. */
export function collectorStagingKey(d: BucketDestination, signalId: string): string {
  return `${collectorBase(d)}/staging/${encodeURIComponent(signalId)}.json`;
}

export function deadLetterKey(destinationId: string, signalId: string): string {
  return `dead-letter/${destinationId}/${encodeURIComponent(signalId)}.json`;
}

export function destinationStateKey(destinationId: string): string {
  return `destinations/${destinationId}/state.json`;
}
