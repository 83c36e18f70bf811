/**
 * The choice of Parquet reader for `signal-kit load`, measured: hyparquet (what load uses), parquet-wasm with
 * apache-arrow, and @dsnp/parquetjs, each reading the same signals part as the kit's writer writes it (ZSTD where Node
 * has it) into plain values, row group by row group where the library can. Per library: whether it reads the part,
 * the median time of a read over alternating rounds, and how the typed columns come out.
 *
 *   node bench/parquet-readers.ts [--signals 20000] [--rounds 9]
 *
 * Only hyparquet is a dependency of the kit; the other two are looked up in PARQUET_LIBS_DIR, as for
 * bench/parquet-libraries.ts (which says how to install them).
 */
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { encodeTable } from '../activities/tables/encode.ts';
import { SIGNALS_TABLE, signalRow } from '../contract/tables/signals.ts';
import { parquetRowGroups } from '../loader/parquet-rows.ts';
import { median } from './lib/stats.ts';
import { signal } from './postgres-load.ts';

// biome-ignore lint/suspicious/noExplicitAny: the two optional libraries are loaded untyped
type Any = any;
type Reader = (bytes: Buffer) => Promise<Record<string, unknown>[]>;

async function optional(name: string): Promise<Any> {
  const base = process.env['PARQUET_LIBS_DIR'] ? join(process.env['PARQUET_LIBS_DIR'], 'x.js') : import.meta.url;
  return import(pathToFileURL(createRequire(base).resolve(name)).href);
}

/** hyparquet as load uses it (loader/parquet-rows.ts): a row group at a time, times and JSON as text. */
const hyparquet: Reader = async (bytes) => {
  const names = SIGNALS_TABLE.columns.map((column) => column.name);
  const rows: Record<string, unknown>[] = [];
  const file = new Uint8Array(bytes).buffer;
  const groups = await parquetRowGroups(file, SIGNALS_TABLE, { manifestUrl: 'bench', key: 'part' });
  for await (const group of groups()) {
    for (const values of group) rows.push(Object.fromEntries(names.map((name, i) => [name, values[i]])));
  }
  return rows;
};

/** parquet-wasm: the file into an Arrow table (IPC), then apache-arrow's columns read cell by cell into rows. */
async function arrowReader(): Promise<Reader> {
  const wasm: Any = await optional('parquet-wasm');
  const arrow: Any = await optional('apache-arrow');
  return async (bytes) => {
    const table = arrow.tableFromIPC(wasm.readParquet(new Uint8Array(bytes)).intoIPCStream());
    const columns = table.schema.fields.map((field: Any) => [field.name, table.getChild(field.name)]);
    const rows: Record<string, unknown>[] = [];
    for (let i = 0; i < table.numRows; i++) {
      const row: Record<string, unknown> = {};
      for (const [name, vector] of columns) row[name] = vector.get(i);
      rows.push(row);
    }
    return rows;
  };
}

/** @dsnp/parquetjs: its cursor, a record at a time. */
async function parquetjsReader(): Promise<Reader> {
  const parquet: Any = await optional('@dsnp/parquetjs');
  const { ParquetReader } = parquet.default ?? parquet;
  return async (bytes) => {
    const reader = await ParquetReader.openBuffer(bytes);
    const cursor = reader.getCursor();
    const rows: Record<string, unknown>[] = [];
    for (let row = await cursor.next(); row; row = await cursor.next()) rows.push(row);
    await reader.close();
    return rows;
  };
}

/** How one library hands out the typed columns of a signal with a filing date and highlights. */
function typesOf(row: Record<string, unknown> | undefined): string {
  if (!row) return 'no row';
  const kind = (v: unknown) =>
    v === null || v === undefined
      ? String(v)
      : v instanceof Date
        ? 'Date'
        : Array.isArray(v)
          ? 'array'
          : typeof v === 'object'
            ? (v.constructor?.name ?? 'object')
            : typeof v;
  return ['detected_at', 'filing_date', 'highlights', 'data', 'relevance']
    .map((name) => `${name}: ${kind(row[name])}`)
    .join(', ');
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { signals: { type: 'string', default: '20000' }, rounds: { type: 'string', default: '9' } },
  });
  const count = Number(values.signals);
  const rows = Array.from({ length: count }, (_, i) => {
    const s = signal(i);
    return signalRow(s, { record_id: null, row: null, domain: s.domain });
  });
  const bytes = encodeTable('parquet', SIGNALS_TABLE, rows, undefined);
  const readers: [string, Reader | Error][] = [['hyparquet', hyparquet]];
  for (const [name, make] of [
    ['parquet-wasm + apache-arrow', arrowReader],
    ['@dsnp/parquetjs', parquetjsReader],
  ] as const) {
    readers.push([name, await make().catch((error: unknown) => error as Error)]);
  }
  const times = new Map<string, number[]>();
  const outcome = new Map<string, string>();
  for (let round = 0; round < Number(values.rounds); round++) {
    const order = round % 2 ? [...readers].reverse() : readers;
    for (const [name, reader] of order) {
      if (reader instanceof Error || outcome.get(name)?.startsWith('fails')) {
        if (reader instanceof Error) outcome.set(name, `fails to load: ${reader.message}`);
        continue;
      }
      const started = performance.now();
      try {
        const read = await reader(bytes);
        times.set(name, [...(times.get(name) ?? []), performance.now() - started]);
        const sample = read.find((row) => row['filing_date'] !== null && row['filing_date'] !== undefined);
        outcome.set(name, read.length === count ? typesOf(sample) : `read ${read.length} of ${count} rows`);
      } catch (error) {
        outcome.set(name, `fails to read the part: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  }
  console.log(
    `${count} signals, one Parquet part of ${bytes.length} bytes as the kit writes it; ${values.rounds} rounds`,
  );
  const base = median(times.get('hyparquet') ?? []);
  for (const [name] of readers) {
    const t = times.get(name);
    const ms = t ? `${median(t).toFixed(0)} ms (${(median(t) / base).toFixed(2)}× hyparquet)` : '-';
    console.log(`${name}: ${ms}; ${outcome.get(name)}`);
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
