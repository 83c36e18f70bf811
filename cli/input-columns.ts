/**
 * Checks an input's header against the columns a job needs before the job starts, so that a file without a usable
 * column is refused at once (exit 2, naming its columns and the flag), not by a failed job later; so is a local file
 * whose encoding cannot be told, wherever the byte that says so lies. Only what the CLI can read is checked: an input
 * it cannot open (a bucket only the worker may read) is left to the job.
 */
import type { InputEncoding } from '../activities/input/encoding.ts';
import { columnRequest } from '../activities/input/identify.ts';
import { ColumnError, InputError } from '../connectors/errors.ts';
import { readCsvRecords } from '../connectors/jsonl.ts';
import { chooseColumns } from '../connectors/normalize/columns.ts';
import type { Store } from '../connectors/storage/store.ts';
import type { JobStart } from '../library/jobs.ts';
import { UsageError } from './args.ts';

/** The kind of a job that reads an input file. */
export function jobKindOf(
  job: Exclude<JobStart, { workflow: 'intentExport' }>,
): 'enrich' | 'enrich-contacts' | 'verify-emails' {
  return job.workflow === 'bulkEnrich'
    ? 'enrich'
    : job.workflow === 'enrichContacts'
      ? 'enrich-contacts'
      : 'verify-emails';
}

export async function checkInputColumns(job: JobStart, openStore: (url: string) => Store): Promise<void> {
  if (job.workflow === 'intentExport') return;
  const kind = jobKindOf(job);
  const { openInput, sniffDelimiter } = await import('../activities/input/read-input.ts');
  let header: string[] | undefined;
  try {
    const source = await openInput(openStore, job.input.input, job.input.encoding);
    if (source.format !== 'csv') {
      source.body.destroy();
      return;
    }
    const { delimiter, body } = await sniffDelimiter(source.text);
    for await (const entry of readCsvRecords(body, { delimiter })) {
      if (entry.record) header = Object.keys(entry.record);
      break;
    }
    source.body.destroy();
    // A local file is read through once more, for its encoding alone, so that a byte that makes it undecidable
    // anywhere in it is refused before the job pays for its first rows (a bucket's input: by the job, as it reads).
    if (job.input.input.startsWith('file:') || !job.input.input.includes('://')) {
      const whole = await openInput(openStore, job.input.input, job.input.encoding);
      for await (const _ of whole.text) void _;
    }
  } catch (error) {
    // What the file itself says no to (missing, not a CSV or JSONL, its encoding undecidable) is refused before
    // anything starts; what the command cannot reach (a bucket only the worker may read) is left to the job.
    if (error instanceof InputError) throw new UsageError(error.message);
    return;
  }
  if (!header) return;
  try {
    chooseColumns(header, columnRequest(kind, job.input));
  } catch (error) {
    if (error instanceof ColumnError) throw new UsageError(`input ${job.input.input}: ${error.message}`);
    throw error;
  }
}

/** What `schedule create` reads of a night's export: the file and how a night reads it. */
export interface NightInput {
  kind: 'enrich' | 'enrich-contacts';
  input: string;
  column?: string;
  idColumn?: string;
  keepColumns?: string[];
  encoding?: InputEncoding;
  sheet?: string;
}

/**
 * `schedule create`'s check of the export every night reads: its header and first row through the reader a night
 * uses (so what a night would fail on is refused now, exit 2, in the night's own words), and a local file's encoding
 * through to its end. A missing file is refused unless `allowMissing` (an export that lands later); a file the command
 * cannot reach (a bucket only the worker may read) is left to the night.
 */
export async function checkNightInput(
  night: NightInput,
  openStore: (url: string) => Store,
  allowMissing: boolean,
): Promise<void> {
  const { openInput, readInputRecords } = await import('../activities/input/read-input.ts');
  try {
    const source = await openInput(openStore, night.input, night.encoding, night.sheet);
    let rows = 0;
    for await (const _ of readInputRecords(source, columnRequest(night.kind, night))) {
      rows += 1;
      break;
    }
    source.body.destroy();
    if (rows === 0) throw new InputError(`input ${night.input} has no data rows`);
    if (source.format !== 'xlsx' && (night.input.startsWith('file:') || !night.input.includes('://'))) {
      const whole = await openInput(openStore, night.input, night.encoding, night.sheet);
      for await (const _ of whole.text) void _;
    }
  } catch (error) {
    if (error instanceof InputError && /does not exist$/.test(error.message)) {
      if (allowMissing) return;
      throw new UsageError(`${error.message}; if the export lands there later, create with --allow-missing-input`);
    }
    if (error instanceof InputError || error instanceof ColumnError) throw new UsageError(error.message);
  }
}
