/**
 * The manifest `load` starts from: read alone, it names the output its parts are under (`output`), each part's table,
 * format and sha256, and when the job or run finished. Parsed once here, every problem named by its field.
 */
import { z } from 'zod';
import { feedManifestClaims } from '../activities/feeds/layout.ts';
import { pushManifestClaims } from '../activities/push/layout.ts';
import { syncRunPrefix } from '../activities/sync/layout.ts';
import { openStore } from '../config/storage.ts';
import { ManifestError } from '../connectors/errors.ts';
import { type FeedKind, SYNC_KIND } from '../contract/kinds.ts';
import { jobManifestClaims, placeManifest, runManifestClaims } from '../contract/manifest-place.ts';
import { type CheckedManifest, readCheckedManifest } from '../contract/manifest-read.ts';
import {
  FeedManifestSchema,
  type ManifestPartSchema,
  ManifestSchema,
  PushManifestSchema,
  SyncManifestSchema,
} from '../contract/manifest-schemas.ts';

export type LoadPart = z.infer<typeof ManifestPartSchema>;

/**
 * What a manifest's tables come from: a bulk job of a kind, a scheduled push's run, a scheduled feed's run, or a
 * night of the CRM sync (whose rows table is enrich's or enrich-contacts').
 */
export type ManifestSource =
  | { kind: 'job'; jobKind: 'enrich' | 'enrich-contacts' | 'verify-emails'; jobId: string }
  | { kind: 'push'; name: string; runId: string }
  | { kind: 'feed'; feedKind: FeedKind; name: string; runId: string }
  | { kind: 'sync'; rowsKind: 'enrich' | 'enrich-contacts'; name: string; runId: string };

export interface LoadManifest {
  /** The manifest's own URL, as given. */
  url: string;
  output: string;
  status: string;
  finishedAt: string;
  parts: LoadPart[];
  source: ManifestSource;
  /** Input columns kept with the rows (enrich, verify-emails, a sync night), by the input's header. */
  kept: string[] | undefined;
}

/** `s3://b/p/_manifest.json` → the store at `s3://b/p` and the key `_manifest.json`. */
function split(url: string): { base: string; key: string } {
  const at = url.lastIndexOf('/');
  if (at < 0 || at === url.length - 1) throw new ManifestError(url, 'not the URL of a manifest file');
  return { base: url.slice(0, at), key: url.slice(at + 1) };
}

/**
 * The manifest as the kit writes it, under the one manifest contract (contract/manifest-schemas.ts): a job's
 * (it names its `job_id`), a sync night's (its `kind` is `crm-sync`), a feed run's (another `kind`, no job id) or a
 * push run's; read as the kit reads its own
 * manifests back (at most 1 MiB, nested no deeper than 32, JSON, then the schema), each problem named by its field.
 */
async function readShipped(url: string, base: string, key: string) {
  let read: CheckedManifest<Record<string, unknown>> | undefined;
  try {
    read = await readCheckedManifest(openStore(base), key, z.record(z.string(), z.unknown()));
  } catch (error) {
    throw new ManifestError(url, `cannot be read: ${error instanceof Error ? error.message : String(error)}`, {
      cause: error,
    });
  }
  if (read === undefined) throw new ManifestError(url, 'cannot be read: there is no such manifest');
  if (read.skipped !== undefined) throw new ManifestError(url, `is ${read.skipped}`);
  const raw = read.manifest;
  const fieldError = (error: z.ZodError) => {
    const issue = error.issues[0];
    return new ManifestError(
      url,
      `field "${issue?.path.join('.') || '(the manifest)'}": ${issue?.message ?? 'invalid'}`,
    );
  };
  if (raw['job_id'] !== undefined) {
    const job = ManifestSchema.safeParse(raw);
    if (!job.success) throw fieldError(job.error);
    return { type: 'job' as const, manifest: job.data };
  }
  if (raw['kind'] === SYNC_KIND) {
    const sync = SyncManifestSchema.safeParse(raw);
    if (!sync.success) throw fieldError(sync.error);
    return { type: 'sync' as const, manifest: sync.data };
  }
  if (raw['kind'] !== undefined) {
    const feed = FeedManifestSchema.safeParse(raw);
    if (!feed.success) throw fieldError(feed.error);
    return { type: 'feed' as const, manifest: feed.data };
  }
  if (raw['name'] === undefined || raw['run_id'] === undefined) {
    throw new ManifestError(url, 'neither a job manifest (job_id) nor a scheduled run manifest (name, run_id)');
  }
  const push = PushManifestSchema.safeParse(raw);
  if (!push.success) throw fieldError(push.error);
  return { type: 'push' as const, manifest: push.data };
}

type Shipped = Awaited<ReturnType<typeof readShipped>>;

/** What the manifest's tables come from, by its kind. */
function sourceOf(url: string, read: Shipped): ManifestSource {
  if (read.type === 'sync') {
    const night = read.manifest;
    if (night.rows_kind === undefined) {
      throw new ManifestError(
        url,
        'field "rows_kind": missing; a sync night written before the loader took sync nights: run the night again',
      );
    }
    return { kind: 'sync', rowsKind: night.rows_kind, name: night.name, runId: night.run_id };
  }
  if (read.type === 'job') {
    const kind = read.manifest.kind;
    if (kind === 'intent-export') {
      throw new ManifestError(
        url,
        `field "kind": ${kind} jobs have no tables to load (enrich, enrich-contacts and verify-emails do)`,
      );
    }
    return { kind: 'job', jobKind: kind, jobId: read.manifest.job_id };
  }
  if (read.type === 'feed') {
    const feed = read.manifest;
    return { kind: 'feed', feedKind: feed.kind as FeedKind, name: feed.name, runId: feed.run_id };
  }
  return { kind: 'push', name: read.manifest.name, runId: read.manifest.run_id };
}

/** Where the manifest's own ids say it and its parts lie. */
function claimsOf(read: Shipped) {
  if (read.type === 'job') return jobManifestClaims(read.manifest);
  if (read.type === 'feed') return feedManifestClaims({ ...read.manifest, kind: read.manifest.kind as FeedKind });
  if (read.type === 'sync')
    return runManifestClaims(read.manifest, (run) => syncRunPrefix({ ...run, at: read.manifest.scheduled_at }));
  return pushManifestClaims(read.manifest);
}

export async function readLoadManifest(url: string): Promise<LoadManifest> {
  const { base, key } = split(url);
  const read = await readShipped(url, base, key);
  const manifest = read.manifest;
  const source = sourceOf(url, read);
  // Where the parts are read from follows from where the manifest was found, never from what it says alone: a
  // manifest planted elsewhere, or naming parts outside its folder, is refused before any part is opened.
  const place = placeManifest(url, claimsOf(read));
  if (manifest.status === 'failed') {
    throw new ManifestError(url, `field "status": the ${source.kind} failed; only a finished one's tables are loaded`);
  }
  return {
    url,
    output: place.output,
    status: manifest.status,
    finishedAt: manifest.finished_at,
    parts: manifest.parts,
    source,
    kept: read.type === 'job' || read.type === 'sync' ? read.manifest.columns?.kept : undefined,
  };
}
