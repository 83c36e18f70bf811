/**
 * Readers of the flat tables that nobody here wrote: DuckDB (its npm package) for Parquet, Python's csv module for
 * CSV. The kit's own encoders are never used to read back what they wrote.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { gunzipSync } from 'node:zlib';
import { DuckDBInstance } from '@duckdb/node-api';

const run = promisify(execFile);

export type DuckRow = Record<string, unknown>;

/** One in-memory DuckDB connection; `query` returns rows as JSON-friendly values. */
export async function openDuck(): Promise<{ query: (sql: string) => Promise<DuckRow[]>; close: () => void }> {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  return {
    query: async (sql) => (await connection.runAndReadAll(sql)).getRowObjectsJson() as DuckRow[],
    close: () => {
      connection.closeSync();
      instance.closeSync();
    },
  };
}

export const sqlString = (text: string) => `'${text.replaceAll("'", "''")}'`;

/** The column names and DuckDB types of what `from` reads (a `read_parquet(...)` expression). */
export async function describe(
  duck: Awaited<ReturnType<typeof openDuck>>,
  from: string,
): Promise<Array<[string, string]>> {
  const rows = await duck.query(`DESCRIBE SELECT * FROM ${from}`);
  return rows.map((row) => [String(row['column_name']), String(row['column_type'])]);
}

/**
 * Rows read by DuckDB with values made comparable to a JSONL table row: timestamps as ISO 8601 UTC strings with
 * milliseconds, dates as `YYYY-MM-DD`, JSON columns as their text.
 */
export async function readParquetRows(
  duck: Awaited<ReturnType<typeof openDuck>>,
  from: string,
  types: ReadonlyArray<[string, string]>,
): Promise<DuckRow[]> {
  const select = types.map(([name, type]) => {
    const id = `"${name.replaceAll('"', '""')}"`;
    if (type.startsWith('TIMESTAMP')) {
      return `strftime(${id} AT TIME ZONE 'UTC', '%Y-%m-%dT%H:%M:%S.%gZ') AS ${id}`;
    }
    if (type === 'DATE') return `strftime(${id}, '%Y-%m-%d') AS ${id}`;
    if (type === 'JSON') return `${id}::VARCHAR AS ${id}`;
    return id;
  });
  return duck.query(`SELECT ${select.join(', ')} FROM ${from}`);
}

/**
 * The rows of a CSV file as Python's csv module reads it (UTF-8, RFC 4180): the header, then each row's cells. With
 * `delimiter`, a file as a tool wrote it: that separator, and a UTF-8 byte-order mark dropped (`utf-8-sig`).
 */
export async function readCsvWithPython(path: string, delimiter?: string, encoding?: string): Promise<string[][]> {
  const script = [
    'import csv, json, sys',
    "encoding = sys.argv[3] if len(sys.argv) > 3 else 'utf-8-sig' if len(sys.argv) > 2 else 'utf-8'",
    "with open(sys.argv[1], newline='', encoding=encoding) as f:",
    "    print(json.dumps(list(csv.reader(f, strict=True, delimiter=sys.argv[2] if len(sys.argv) > 2 else ','))))",
  ].join('\n');
  const args = ['-c', script, path, ...(delimiter === undefined ? [] : [delimiter]), ...(encoding ? [encoding] : [])];
  const { stdout } = await run('python3', args, { maxBuffer: 256 * 1024 * 1024 });
  return JSON.parse(stdout) as string[][];
}

/** The objects of a JSONL (or gzip JSONL) file's bytes. */
export function jsonlObjects(raw: Buffer, gzip: boolean): Record<string, unknown>[] {
  const text = (gzip ? gunzipSync(raw) : raw).toString('utf8');
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}
