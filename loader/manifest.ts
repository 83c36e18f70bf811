/**
 * The manifest `load` starts from: read alone, it names the output its parts are under (`output`), each part's table,
 * format and sha256, and when the job or run finished. Parsed once here, every problem named by its field.
 */
import { z } from 'zod';
import type { FeedKind } from '../activities/feeds/types.ts';
import { openStore } from '../config/storage.ts';
import { ManifestError } from '../connectors/errors.ts';

const PartSchema = z.looseObject({
  key: z.string().min(1),
  lines: z.int().nonnegative(),
  bytes: z.int().nonnegative(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  table: z.string().optional(),
  format: z.string().optional(),
});

const ManifestSchema = z.looseObject({
  schema_version: z.int().positive(),
  output: z.string().min(1),
  status: z.string(),
  finished_at: z.iso.datetime(),
  parts: z.array(PartSchema),
  job_id: z.string().optional(),
  kind: z.string().optional(),
  name: z.string().optional(),
  run_id: z.string().optional(),
  columns: z.looseObject({ kept: z.array(z.string()).optional() }).optional(),
});

export type LoadPart = z.infer<typeof PartSchema>;

/** What a manifest's tables come from: a bulk job of a kind, a scheduled push's run, or a scheduled feed's run. */
export type ManifestSource =
  | { kind: 'job'; jobKind: 'enrich' | 'enrich-contacts' | 'verify-emails'; jobId: string }
  | { kind: 'push'; name: string; runId: string }
  | { kind: 'feed'; feedKind: FeedKind; name: string; runId: string };

const FEED_KINDS: readonly string[] = ['company-search', 'contact-search', 'intent-contacts'] satisfies FeedKind[];

export interface LoadManifest {
  /** The manifest's own URL, as given. */
  url: string;
  output: string;
  status: string;
  finishedAt: string;
  parts: LoadPart[];
  source: ManifestSource;
  /** Input columns kept with the rows (enrich, verify-emails), by the input's header. */
  kept: string[] | undefined;
}

/** `s3://b/p/_manifest.json` → the store at `s3://b/p` and the key `_manifest.json`. */
function split(url: string): { base: string; key: string } {
  const at = url.lastIndexOf('/');
  if (at < 0 || at === url.length - 1) throw new ManifestError(url, 'not the URL of a manifest file');
  return { base: url.slice(0, at), key: url.slice(at + 1) };
}

/** The folder a job's or run's manifest lies in, relative to its output: the job id, or the run's folder. */
function ownFolderMatches(source: ManifestSource, folder: string): boolean {
  if (source.kind === 'job') return folder === source.jobId;
  return folder.startsWith(`${source.name}/`) && folder.endsWith(`/run-${source.runId}`);
}

/**
 * Where the parts are read from follows from where the manifest was found, never from what it says alone: its
 * `output` must be the folder its own URL lies under, the folder between them must be the job's (or the run's) that
 * it names, and every part must lie in that folder. A manifest planted elsewhere, or naming parts outside its folder,
 * is refused before any part is opened.
 */
function checkFolder(url: string, base: string, output: string, source: ManifestSource, parts: LoadPart[]): void {
  const root = output.replace(/\/+$/, '');
  if (!base.startsWith(`${root}/`)) {
    throw new ManifestError(url, `field "output": the manifest does not lie under the output it names`);
  }
  const folder = base.slice(root.length + 1);
  if (!ownFolderMatches(source, folder)) {
    throw new ManifestError(
      url,
      `the manifest's folder (${folder}) is not the ${source.kind === 'job' ? 'job' : 'run'} it names (${source.kind === 'job' ? source.jobId : `${source.name}, run ${source.runId}`})`,
    );
  }
  parts.forEach((part, i) => {
    const segments = part.key.split('/');
    if (
      !part.key.startsWith(`${folder}/`) ||
      segments.some((s) => s === '..' || s === '.' || s === '') ||
      /^[a-z][a-z0-9+.-]*:/i.test(part.key)
    ) {
      throw new ManifestError(url, `field "parts.${i}.key": a part must lie in the manifest's own folder (${folder}/)`);
    }
  });
}

export async function readLoadManifest(url: string): Promise<LoadManifest> {
  const { base, key } = split(url);
  let text: string;
  try {
    text = await openStore(base).readText(key);
  } catch (error) {
    throw new ManifestError(url, `cannot be read: ${error instanceof Error ? error.message : String(error)}`, {
      cause: error,
    });
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new ManifestError(url, 'is not JSON', { cause: error });
  }
  const parsed = ManifestSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue?.path.join('.') || '(the manifest)';
    throw new ManifestError(url, `field "${field}": ${issue?.message ?? 'invalid'}`);
  }
  const manifest = parsed.data;
  let source: ManifestSource;
  if (manifest.job_id !== undefined) {
    if (manifest.kind !== 'enrich' && manifest.kind !== 'enrich-contacts' && manifest.kind !== 'verify-emails') {
      throw new ManifestError(
        url,
        `field "kind": ${manifest.kind} jobs have no tables to load (enrich, enrich-contacts and verify-emails do)`,
      );
    }
    source = { kind: 'job', jobKind: manifest.kind, jobId: manifest.job_id };
  } else if (manifest.kind !== undefined) {
    // A scheduled feed's run (a push run's manifest names no kind): its lines are companies or people.
    if (!FEED_KINDS.includes(manifest.kind)) {
      throw new ManifestError(url, `field "kind": ${manifest.kind} is neither a job's kind nor a feed's`);
    }
    if (manifest.name === undefined || manifest.run_id === undefined) {
      throw new ManifestError(url, `field "${manifest.name === undefined ? 'name' : 'run_id'}": a feed run names it`);
    }
    source = { kind: 'feed', feedKind: manifest.kind as FeedKind, name: manifest.name, runId: manifest.run_id };
  } else if (manifest.name !== undefined && manifest.run_id !== undefined) {
    source = { kind: 'push', name: manifest.name, runId: manifest.run_id };
  } else {
    throw new ManifestError(url, 'neither a job manifest (job_id) nor a scheduled-push run manifest (name, run_id)');
  }
  checkFolder(url, base, manifest.output, source, manifest.parts);
  if (manifest.status === 'failed') {
    throw new ManifestError(url, `field "status": the ${source.kind} failed; only a finished one's tables are loaded`);
  }
  return {
    url,
    output: manifest.output,
    status: manifest.status,
    finishedAt: manifest.finished_at,
    parts: manifest.parts,
    source,
    kept: manifest.columns?.kept,
  };
}
