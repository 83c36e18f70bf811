/**
 * A table part written row by row to a local file (activities/tables/part-writer.ts, the sync night's `--format`
 * tables) holds what the one-buffer encoder writes for the same rows: CSV byte for byte, JSONL once gunzipped, and
 * Parquet, written a row group at a time, read back by DuckDB row for row, over several row groups.
 */
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { encodeTable } from '../../../activities/tables/encode.ts';
import { openTablePart, PARQUET_GROUP_ROWS } from '../../../activities/tables/part-writer.ts';
import type { TableDef, TableRow } from '../../../contract/tables/columns.ts';
import { openDuck, sqlString } from '../../helpers/tables.ts';

const DEF: TableDef = {
  table: 'rows',
  columns: [
    { name: 'row', type: 'int', nullable: false, description: 'position' },
    { name: 'record_id', type: 'string', nullable: true, description: 'id', userValue: true, text: true },
    { name: 'status', type: 'string', nullable: false, description: 'status' },
    { name: 'signal_summary', type: 'json', nullable: true, description: 'counts' },
    { name: 'latest_at', type: 'timestamp', nullable: true, description: 'newest' },
  ],
};

/** Past two row groups of a streamed Parquet part, with values of every kind (nulls, non-ASCII, a formula). */
const ROWS: TableRow[] = Array.from({ length: 2 * PARQUET_GROUP_ROWS + 17 }, (_, i) => ({
  row: i + 1,
  record_id: i % 7 === 0 ? null : `001-${i}-Zürich`,
  status: i % 5 === 0 ? '=cmd()' : 'ok',
  signal_summary: i % 3 === 0 ? null : { news: i % 11, hiring: 1 },
  latest_at: i % 4 === 0 ? null : Date.UTC(2026, 2, 1) + i * 60_000,
}));

async function streamed(format: 'csv' | 'jsonl' | 'parquet', dir: string): Promise<string> {
  const path = join(dir, `streamed.${format}`);
  const part = openTablePart(format, DEF, path);
  for (const row of ROWS) await part.add(row);
  const proof = await part.finish();
  expect(proof.bytes).toBe((await readFile(path)).length);
  return path;
}

describe('a table part written row by row', () => {
  it('CSV and JSONL: the bytes the one-buffer encoder writes', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'signal-kit-part-writer-'));
    expect(await readFile(await streamed('csv', dir))).toEqual(encodeTable('csv', DEF, ROWS, 'gzip'));
    const jsonl = gunzipSync(await readFile(await streamed('jsonl', dir)));
    expect(jsonl).toEqual(gunzipSync(encodeTable('jsonl', DEF, ROWS, 'gzip')));
  });

  it('Parquet over several row groups: the rows the one-buffer encoder writes, as DuckDB reads them', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'signal-kit-part-writer-'));
    const whole = join(dir, 'whole.parquet');
    await writeFile(whole, encodeTable('parquet', DEF, ROWS, 'gzip'));
    const path = await streamed('parquet', dir);
    const duck = await openDuck();
    try {
      const read = (file: string) =>
        duck.query(
          `SELECT row, record_id, status, signal_summary::VARCHAR AS summary, typeof(signal_summary) AS t, latest_at::VARCHAR AS latest
           FROM read_parquet(${sqlString(file)}) ORDER BY row`,
        );
      const groups = await duck.query(
        `SELECT count(DISTINCT row_group_id) AS n FROM parquet_metadata(${sqlString(path)})`,
      );
      expect(Number(groups[0]!['n'])).toBe(3);
      const rows = await read(path);
      expect(rows).toHaveLength(ROWS.length);
      expect(rows).toEqual(await read(whole));
    } finally {
      duck.close();
    }
  });
});
