import { createHash } from 'node:crypto';
import type { Store } from '../../connectors/storage/store.ts';
import { readPartLines } from '../run/parts.ts';
import { encodeTable } from '../tables/encode.ts';
import { invalidLinesAsRows, keptColumnsOf, rowsTable } from '../tables/rows.ts';
import type { JobRef, ManifestPart } from './types.ts';

/** A job's own `invalid-NNNNN` lines part (not a table part). */
const INVALID_LINES_PART = /\/parts\/invalid-\d{5,}\.jsonl(\.gz)?$/;

/** `<job>/rows.csv`: every rows CSV part of the job in one file with one header row, the file a CRM imports. */
export const crmCsvKey = (job: JobRef) => `${job.jobId}/rows.csv`;

/**
 * Joins the job's rows CSV parts (in the manifest's order) into one CSV: the first part whole, the others without
 * their header row (every part of a table has the same header), then the input's invalid rows as `invalid` rows with
 * their reason, so that every input row has one row in the file a CRM imports. Streamed part by part, so its size is
 * not bounded by memory. Written again by every finalization, from the parts the manifest lists.
 */
export async function writeCrmCsv(store: Store, job: JobRef, parts: readonly ManifestPart[]): Promise<ManifestPart> {
  const rows = parts.filter((part) => part.table === 'rows' && part.format === 'csv');
  const invalid = parts.filter((part) => (part.table ?? 'lines') === 'lines' && INVALID_LINES_PART.test(part.key));
  let invalidLines = 0;
  const writer = store.openWrite(crmCsvKey(job), { contentType: 'text/csv; charset=utf-8' });
  const hash = createHash('sha256');
  let bytes = 0;
  const write = async (chunk: Buffer) => {
    hash.update(chunk);
    bytes += chunk.length;
    if (!writer.stream.write(chunk)) await new Promise((resolve) => writer.stream.once('drain', resolve));
  };
  try {
    for (const [i, part] of rows.entries()) {
      let header = i > 0; // still inside a header row to skip
      for await (const chunk of await store.openRead(part.key)) {
        let data = chunk as Buffer;
        if (header) {
          const end = data.indexOf(0x0a);
          if (end < 0) continue;
          data = data.subarray(end + 1);
          header = false;
        }
        if (data.length > 0) await write(data);
      }
    }
    for (const [i, part] of invalid.entries()) {
      const lines = await readPartLines(store, part.key);
      const def = rowsTable(
        job.kind === 'verify-emails' ? 'verify-emails' : 'enrich',
        keptColumnsOf(lines, job.keepColumns),
      );
      const csv = encodeTable('csv', def, invalidLinesAsRows(lines, def), 'none');
      const withHeader = rows.length === 0 && i === 0;
      await write(withHeader ? csv : csv.subarray(csv.indexOf(0x0a) + 1));
      invalidLines += lines.length;
    }
    writer.stream.end();
    await writer.done();
  } catch (error) {
    await writer.abort(error);
    throw error;
  }
  return {
    key: crmCsvKey(job),
    lines: rows.reduce((n, part) => n + part.lines, 0) + invalidLines,
    bytes,
    sha256: hash.digest('hex'),
    table: 'rows',
    format: 'csv',
  };
}
