import type { z } from 'zod';
import { syncManifestClaims } from '../../activities/sync/layout.ts';
import type { Store } from '../../connectors/storage/store.ts';
import { readPlacedManifest } from '../../contract/manifest-read.ts';
import { SyncManifestSchema } from '../../contract/manifest-schemas.ts';

/**
 * A sync schedule's last night as its manifest says it (what `schedule state` and `describe` show): the newest
 * manifest under `<name>/runs/` that the contract's checked reader and place rule believe. A manifest there that is
 * not one, or does not lie where its own name, day and run id put it, or names a file outside its folder (planted,
 * copied from another night or schedule, forged) is never shown: it is named in `ignored` with the reason, and the
 * next newest is read.
 */

/** How many of the newest manifests are read looking for one to believe. */
export const NIGHT_MANIFESTS_READ = 10;

type SyncManifest = z.output<typeof SyncManifestSchema>;

const NIGHT_MANIFEST = /^dt=\d{4}-\d{2}-\d{2}\/run-[^/]+\/_manifest\.json$/;

export interface SyncNightView {
  manifest: string;
  run_id: string;
  status: string;
  finished_at: string;
  records: { total: number; new: number; changed: number; unchanged: number; gone: number };
  credits: number;
  calls: number;
  new_signals: number;
  /** Every file the night delivered (rows.csv, changes.csv, its tables, gone.csv), as URLs. */
  files: string[];
}

export interface LastSyncNight {
  lastNight: SyncNightView | null;
  ignored: { manifest: string; reason: string }[];
}

export async function readLastSyncNight(store: Store, name: string): Promise<LastSyncNight> {
  const prefix = `${name}/runs/`;
  const keys: string[] = [];
  for await (const info of store.list(prefix)) {
    if (NIGHT_MANIFEST.test(info.key.slice(prefix.length))) keys.push(info.key);
  }
  keys.sort((a, b) => (a < b ? 1 : a > b ? -1 : 0));
  const ignored: LastSyncNight['ignored'] = [];
  for (const key of keys.slice(0, NIGHT_MANIFESTS_READ)) {
    const read = await readPlacedManifest(store, key, SyncManifestSchema, claimsWithGone);
    if (read?.manifest) return { lastNight: nightView(store, key, read.manifest), ignored };
    if (read) ignored.push({ manifest: store.urlOf(key), reason: read.skipped });
  }
  return { lastNight: null, ignored };
}

/** A night's files are its parts and its gone.csv: both must lie in its own folder. */
const claimsWithGone = (manifest: SyncManifest) => {
  const claims = syncManifestClaims(manifest);
  return manifest.gone ? { ...claims, listed: [{ field: 'gone.key', key: manifest.gone.key }] } : claims;
};

function nightView(store: Store, key: string, manifest: SyncManifest): SyncNightView {
  const { total, new: added, changed, unchanged, gone } = manifest.records;
  return {
    manifest: store.urlOf(key),
    run_id: manifest.run_id,
    status: manifest.status,
    finished_at: manifest.finished_at,
    records: { total, new: added, changed, unchanged, gone },
    credits: manifest.credits_charged,
    calls: manifest.calls,
    new_signals: manifest.counts.new_signals,
    files: [...manifest.parts, ...(manifest.gone ? [manifest.gone] : [])].map((part) => store.urlOf(part.key)),
  };
}
