/**
 * Where a manifest's parts are: derived from where the manifest was found, never from what it says alone. A
 * manifest lies in its own folder (a job's `<job id>/`, a run's `<name>/<dir>/dt=<day>/run-<id>/`) under its output;
 * the folder its ids name must be the one it lies in, its `output` (when it has one) the output it lies under, and
 * every part it lists must lie in that folder. Every reader of a manifest (`load`, the dry run, a job finding its
 * finished run, a push recovering a run, the webhook collector) places it here before it believes a figure of it or
 * opens a part, so that a manifest planted elsewhere or naming another job's parts, a bucket's or a local file, is
 * refused by name before anything it names is read.
 */
import { joinUrl, ManifestPlaceError } from '../connectors/errors.ts';

/** What a scheduled run's folder is made from (a `ScheduledRunRef` of activities/run/types.ts fits). */
export interface RunFolderRef {
  name: string;
  output: string;
  runId: string;
  date: string;
}

/** What a manifest says about where it and its parts lie. */
export interface ManifestClaims {
  /**
   * The folder, relative to its output and without a trailing slash, that the manifest's own ids name: a job's id,
   * a run's `<name>/<dir>/dt=<day>/run-<id>`.
   */
  folder: string;
  /** The manifest's field the folder is named by, for the error (`job_id`, `run_id`, `destination_id`). */
  folderField: string;
  /** How many segments the folder has, when its kind fixes it (a job's 1, a run's 4). */
  depth?: number;
  /** Its `output` field, when it has one (a manifest of the release before has none). */
  output?: string | undefined;
  parts: readonly { key: string }[];
  /** Other objects it lists outside `parts` (a job's `rows_csv`, a collector part's tables), by their field. */
  listed?: readonly { field: string; key: string }[];
}

/** A manifest placed: where its parts are read from. */
export interface ManifestPlace {
  /** The manifest's own URL, where it was found. */
  url: string;
  /** The output its parts are read from: the manifest's URL less its folder and file name. */
  output: string;
  /** Its folder, relative to `output`. */
  folder: string;
}

/** The URL of the manifest at `key` of the store at `output`. */
export const manifestUrlAt = (output: string, key: string): string => joinUrl(output, key);

/** A job's manifest: it lies in `<output>/<job id>/`. */
export const jobManifestClaims = (manifest: {
  job_id: string;
  output?: string | undefined;
  parts: readonly { key: string }[];
  rows_csv?: { key: string } | undefined;
}): ManifestClaims => ({
  folder: manifest.job_id,
  folderField: 'job_id',
  depth: 1,
  output: manifest.output,
  parts: manifest.parts,
  listed: manifest.rows_csv ? [{ field: 'rows_csv.key', key: manifest.rows_csv.key }] : [],
});

/** What a scheduled run's manifest (a push's, a feed's) names its run by. */
export interface RunManifestIds {
  name: string;
  dt: string;
  run_id: string;
  output: string;
  parts: readonly { key: string }[];
}

/**
 * A scheduled run's manifest: it lies in the run folder (`prefixOf`, its kind's layout) that its own name, day and
 * run id make.
 */
export function runManifestClaims(manifest: RunManifestIds, prefixOf: (run: RunFolderRef) => string): ManifestClaims {
  const run = { name: manifest.name, output: manifest.output, runId: manifest.run_id, date: manifest.dt };
  return {
    folder: prefixOf(run).replace(/\/$/, ''),
    folderField: 'run_id',
    depth: 4,
    output: manifest.output,
    parts: manifest.parts,
  };
}

/**
 * Places the manifest found at `url` (see the module's comment); a `ManifestPlaceError` naming the field that
 * disagrees (`job_id`/`run_id`, `output`, `parts.N.key`) otherwise.
 */
export function placeManifest(url: string, claims: ManifestClaims): ManifestPlace {
  const dir = url.slice(0, url.lastIndexOf('/'));
  const folder = claims.folder.replace(/\/+$/, '');
  const depth = claims.depth ?? folder.split('/').length;
  if (!isRelativeKey(folder) || folder.split('/').length !== depth || !dir.endsWith(`/${folder}`)) {
    throw new ManifestPlaceError(
      url,
      claims.folderField,
      `the manifest does not lie in the folder its ${claims.folderField} names (${folder}/)`,
    );
  }
  const output = dir.slice(0, dir.length - folder.length - 1);
  if (claims.output !== undefined && claims.output.replace(/\/+$/, '') !== output) {
    throw new ManifestPlaceError(url, 'output', 'the manifest does not lie under the output it names');
  }
  const place = { url, output, folder };
  claims.parts.forEach((part, i) => {
    partKeyIn(place, part.key, `parts.${i}.key`);
  });
  for (const { field, key } of claims.listed ?? []) partKeyIn(place, key, field);
  return place;
}

/**
 * `key` when it names an object in the manifest's own folder: relative to its output, below its folder, without
 * an empty, `.` or `..` segment, a scheme, a backslash or an escape a store might decode. Otherwise refused naming
 * `field`, never the key's target.
 */
export function partKeyIn(place: ManifestPlace, key: string, field: string): string {
  if (typeof key !== 'string' || !key.startsWith(`${place.folder}/`) || !isRelativeKey(key)) {
    throw new ManifestPlaceError(place.url, field, `a part must lie in the manifest's own folder (${place.folder}/)`);
  }
  return key;
}

/** A key made only of plain segments below the root it is read from. */
function isRelativeKey(key: string): boolean {
  if (key === '' || /^[a-z][a-z0-9+.-]*:/i.test(key) || /[\\%]/.test(key)) return false;
  if ([...key].some((c) => c.charCodeAt(0) < 0x20)) return false;
  return key.split('/').every((segment) => segment !== '' && segment !== '.' && segment !== '..');
}
