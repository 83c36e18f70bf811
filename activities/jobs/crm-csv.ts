import { createHash } from 'node:crypto';
import type { Store } from '../../connectors/storage/store.ts';
import type { JobRef, ManifestPart } from './types.ts';

/** `<job>/rows.csv`: every rows CSV part of the job in one file with one header row, the file a CRM imports. */
export const crmCsvKey = (job: JobRef) => `${job.jobId}/rows.csv`;

/**
 * Joins the job's rows CSV parts (in the manifest's order) into one CSV: the first part whole, the others without
 * their header row (every part of a table has the same header). Streamed part by part, so its size is not bounded by
 * memory. Written again by every finalization, from the parts the manifest lists.
 */
export async function writeCrmCsv(store: Store, job: JobRef, parts: readonly ManifestPart[]): Promise<ManifestPart> {
  const rows = parts.filter((part) => part.table === 'rows' && part.format === 'csv');
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
    writer.stream.end();
    await writer.done();
  } catch (error) {
    await writer.abort(error);
    throw error;
  }
  return {
    key: crmCsvKey(job),
    lines: rows.reduce((n, part) => n + part.lines, 0),
    bytes,
    sha256: hash.digest('hex'),
    table: 'rows',
    format: 'csv',
  };
}
