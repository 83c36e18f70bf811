/**
 * Webhook destinations as the worker holds them once config/webhook-destinations.ts has parsed them: where
 * `signal.created` events go. Secrets live here and only here (worker configuration); workflows see a destination by
 * its id, kind and signal-type filter.
 */

export const DESTINATION_ID_PATTERN = /^[a-z0-9][a-z0-9_-]{0,62}$/;

export interface HttpDestination {
  id: string;
  kind: 'http';
  /** An http(s) URL. */
  url: string;
  /** One secret, or several during a rotation (each delivery carries one signature per secret). */
  secret: string | string[];
  signal_types?: string[] | undefined;
  /** Per-request timeout. */
  timeout_ms: number;
}

export interface BucketDestination {
  id: string;
  kind: 'bucket';
  /** Base URL of the store: file://, s3://bucket/prefix, gs://bucket/prefix. */
  url: string;
  /** Key prefix inside the store, without leading or trailing slashes ('' for none). */
  prefix: string;
  signal_types?: string[] | undefined;
  /** Rotate a part every N events ... */
  max_events: number;
  /** ... or T milliseconds after the part's first event, whichever comes first. */
  max_age_ms: number;
  /** Formats of the flat signals table written beside each part (docs/tables.md). */
  formats: ('jsonl' | 'csv' | 'parquet')[];
}

export type Destination = HttpDestination | BucketDestination;

export interface WebhookDeliveryConfig {
  destinations: Destination[];
  /** Dead letters and destination state (a 410 disables a destination) go here. */
  deadLetterUrl: string;
  /** CIDRs outbound deliveries may reach although they are private/loopback/link-local. */
  allowlist: string[];
  /** The secrets a schedule's `--notify` events are signed with (`SIGNAL_KIT_NOTIFY_SECRET`), never in a workflow. */
  notifySecrets?: string[];
}

/** What a workflow knows of a destination: no URL, no secret. */
export interface DestinationRef {
  id: string;
  kind: 'http' | 'bucket';
  signalTypes?: string[];
}

export function destinationRef(d: Destination): DestinationRef {
  return { id: d.id, kind: d.kind, ...(d.signal_types ? { signalTypes: [...d.signal_types] } : {}) };
}

// ---- keys and ids -------------------------------------------------------------------------------------------------

/** The workflow id of a bucket destination's collector. */
export function collectorWorkflowId(destinationId: string): string {
  return `collector-${destinationId}`;
}
