/**
 * The choice of Parquet writer, measured: hyparquet-writer (what the kit uses), parquet-wasm with apache-arrow, and
 * @dsnp/parquetjs, each writing the same flat tables (the rows and signals tables of real bulk answers from the
 * sandbox) in its own child process. Per library: CPU per round (median), output size, the child's peak RSS, and the
 * types DuckDB reads back against the documented ones (docs/tables.md).
 *
 *   node bench/parquet-libraries.ts [--answers 8] [--rounds 7]
 *
 * Only hyparquet-writer is a dependency of the kit. The other two are looked up in PARQUET_LIBS_DIR (a folder whose
 * node_modules holds them), e.g.:
 *
 *   mkdir -p /tmp/pqlibs && cd /tmp/pqlibs && npm init -y && npm install parquet-wasm apache-arrow @dsnp/parquetjs@1.8.9
 *   PARQUET_LIBS_DIR=/tmp/pqlibs node bench/parquet-libraries.ts
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import { DuckDBInstance } from '@duckdb/node-api';
import { encodeTable } from '../activities/tables/encode.ts';
import type { Column, TableDef, TableRow } from '../contract/tables/columns.ts';
import { enrichTables, rowsTable } from '../contract/tables/rows.ts';
import { SIGNALS_TABLE } from '../contract/tables/signals.ts';
import { bulkAnswerTexts } from './lib/sandbox-answers.ts';
import { median } from './lib/stats.ts';

const LIBRARIES = ['hyparquet-writer', 'parquet-wasm + apache-arrow', '@dsnp/parquetjs'] as const;
type Library = (typeof LIBRARIES)[number];

interface Tables {
  rows: TableRow[];
  signals: TableRow[];
}

const DEFS = { rows: rowsTable('enrich'), signals: SIGNALS_TABLE };

// ---- the writers -----------------------------------------------------------------------------------------------

/** A package from PARQUET_LIBS_DIR when set, else from this project. */
async function load<T>(name: string): Promise<T> {
  const base = process.env['PARQUET_LIBS_DIR'] ? join(process.env['PARQUET_LIBS_DIR'], 'x.js') : import.meta.url;
  const path = createRequire(base).resolve(name);
  return (await import(pathToFileURL(path).href)) as T;
}

type Writer = (def: TableDef, rows: TableRow[]) => Promise<Uint8Array>;

async function writerOf(library: Library): Promise<Writer> {
  if (library === 'hyparquet-writer') return async (def, rows) => encodeTable('parquet', def, rows, 'gzip');
  if (library === 'parquet-wasm + apache-arrow') return arrowWriter();
  return parquetjsWriter();
}

// biome-ignore lint/suspicious/noExplicitAny: the two optional libraries are loaded untyped
type Any = any;

async function arrowWriter(): Promise<Writer> {
  const arrow: Any = await load('apache-arrow');
  const wasm: Any = await load('parquet-wasm');
  const typeOf = (column: Column): Any => {
    switch (column.type) {
      case 'int':
        return new arrow.Int32();
      case 'double':
        return new arrow.Float64();
      case 'timestamp':
        return new arrow.TimestampMillisecond('UTC');
      case 'date':
        return new arrow.DateDay();
      case 'string_list':
        return new arrow.List(new arrow.Field('element', new arrow.Utf8(), true));
      default:
        return new arrow.Utf8(); // arrow-js has no JSON type: a json column is written as plain text
    }
  };
  const arrowValue = (column: Column, value: unknown): unknown => {
    if (value === null || value === undefined) return null;
    if (column.type === 'date') return new Date(`${value as string}T00:00:00Z`);
    if (column.type === 'json') return JSON.stringify(value);
    return value;
  };
  return async (def, rows) => {
    const vectors: Record<string, unknown> = {};
    for (const column of def.columns) {
      vectors[column.name] = arrow.vectorFromArray(
        rows.map((row) => arrowValue(column, row[column.name])),
        typeOf(column),
      );
    }
    const table = new arrow.Table(vectors);
    const ipc = arrow.tableToIPC(table, 'stream');
    const props = new wasm.WriterPropertiesBuilder().setCompression(wasm.Compression.SNAPPY).build();
    return wasm.writeParquet(wasm.Table.fromIPCStream(ipc), props);
  };
}

async function parquetjsWriter(): Promise<Writer> {
  const parquet: Any = await load('@dsnp/parquetjs');
  const { ParquetSchema, ParquetWriter } = parquet.default ?? parquet;
  const fieldOf = (column: Column): Record<string, unknown> => {
    const type = {
      string: 'UTF8',
      json: 'JSON',
      int: 'INT32',
      double: 'DOUBLE',
      timestamp: 'TIMESTAMP_MILLIS',
      date: 'DATE',
      string_list: 'UTF8',
    }[column.type];
    return column.type === 'string_list' ? { type, repeated: true } : { type, optional: true };
  };
  return async (def, rows) => {
    const schema = new ParquetSchema(Object.fromEntries(def.columns.map((c) => [c.name, fieldOf(c)])));
    const chunks: Buffer[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        chunks.push(chunk as Buffer);
        done();
      },
    });
    const writer = await ParquetWriter.openStream(schema, sink);
    for (const row of rows) {
      const out: Record<string, unknown> = {};
      for (const column of def.columns) {
        const value = row[column.name];
        if (value === null || value === undefined) continue;
        if (column.type === 'timestamp') out[column.name] = new Date(value as number);
        else if (column.type === 'date') out[column.name] = new Date(`${value as string}T00:00:00Z`);
        else out[column.name] = value;
      }
      await writer.appendRow(out);
    }
    await writer.close();
    return Buffer.concat(chunks);
  };
}

// ---- the child: one library, every round -------------------------------------------------------------------------

async function child(library: Library, dataPath: string, rounds: number, outDir: string): Promise<void> {
  const tables = JSON.parse(await readFile(dataPath, 'utf8')) as Tables;
  const write = await writerOf(library);
  // The writer's own memory: the peak above what the process holds once the tables are parsed and the library loaded.
  global.gc?.();
  const before = process.memoryUsage().rss;
  if (process.resourceUsage().maxRSS * 1024 > before) {
    // Parsing peaked above where the process settled: the high-water mark cannot tell the writer's peak from it.
    process.stderr.write('note: the parse peak is above the settled RSS; the extra is measured above that peak\n');
  }
  const floor = Math.max(before, process.resourceUsage().maxRSS * 1024);
  await write(DEFS.signals, tables.signals.slice(0, 100)); // warm-up
  const cpu: number[] = [];
  let bytes = 0;
  for (let round = 0; round < rounds; round++) {
    const start = process.cpuUsage();
    const rowsFile = await write(DEFS.rows, tables.rows);
    const signalsFile = await write(DEFS.signals, tables.signals);
    const used = process.cpuUsage(start);
    cpu.push((used.user + used.system) / 1000);
    bytes = rowsFile.length + signalsFile.length;
    if (round === 0) {
      await writeFile(join(outDir, 'rows.parquet'), rowsFile);
      await writeFile(join(outDir, 'signals.parquet'), signalsFile);
    }
  }
  const maxRssKb = process.resourceUsage().maxRSS;
  const extraKb = Math.max(0, maxRssKb - floor / 1024);
  process.stdout.write(`${JSON.stringify({ cpu, bytes, maxRssKb, extraKb })}\n`);
}

// ---- the parent --------------------------------------------------------------------------------------------------

async function fetchTables(answers: number): Promise<Tables> {
  const tables: Tables = { rows: [], signals: [] };
  for (const [a, text] of (await bulkAnswerTexts(answers, 'libs')).entries()) {
    const body = JSON.parse(text) as { results: Record<string, unknown>[] };
    const lines = body.results.map((r, i) => ({ ...r, row: a * 100 + i + 1, input: r['domain'] }));
    const { rows, signals } = enrichTables(lines, DEFS.rows);
    tables.rows.push(...rows);
    tables.signals.push(...signals);
  }
  return tables;
}

const DOCUMENTED: Record<Column['type'], string> = {
  string: 'VARCHAR',
  json: 'JSON',
  int: 'INTEGER',
  double: 'DOUBLE',
  timestamp: 'TIMESTAMP WITH TIME ZONE',
  date: 'DATE',
  string_list: 'VARCHAR[]',
};

/** Columns whose type DuckDB reads as documented, and the others with what it read. */
async function typesRead(dir: string): Promise<{ kept: number; total: number; lost: string[] }> {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  let kept = 0;
  let total = 0;
  const lost: string[] = [];
  try {
    for (const [table, def] of Object.entries(DEFS)) {
      const read = (await connection.runAndReadAll(`DESCRIBE SELECT * FROM '${join(dir, `${table}.parquet`)}'`))
        .getRowObjectsJson()
        .map((row) => [String(row['column_name']), String(row['column_type'])]);
      const types = new Map(read as [string, string][]);
      for (const column of def.columns) {
        total += 1;
        const got = types.get(column.name);
        if (got === DOCUMENTED[column.type]) kept += 1;
        else lost.push(`${column.name}: ${got ?? 'missing'}`);
      }
    }
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
  return { kept, total, lost };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      answers: { type: 'string', default: '8' },
      rounds: { type: 'string', default: '7' },
      child: { type: 'string' },
      data: { type: 'string' },
      out: { type: 'string' },
    },
  });
  const rounds = Number(values.rounds);
  if (values.child) {
    await child(values.child as Library, values.data as string, rounds, values.out as string);
    return;
  }
  const dir = await mkdtemp(join(tmpdir(), 'signal-kit-parquet-libs-'));
  const tables = await fetchTables(Number(values.answers));
  const dataPath = join(dir, 'tables.json');
  await writeFile(dataPath, JSON.stringify(tables));
  console.log(`${tables.rows.length} rows, ${tables.signals.length} signals; ${rounds} rounds per library\n`);
  console.log(
    '| library | CPU ms per round (median) | KiB out | peak RSS MiB | RSS above the parsed tables, MiB | types read by DuckDB as documented |',
  );
  console.log('| --- | ---: | ---: | ---: | ---: | --- |');
  const script = fileURLToPath(import.meta.url);
  for (const library of LIBRARIES) {
    const out = await mkdtemp(join(dir, 'out-'));
    try {
      const { stdout } = await promisify(execFile)(
        process.execPath,
        ['--expose-gc', script, '--child', library, '--data', dataPath, '--rounds', String(rounds), '--out', out],
        { maxBuffer: 16 * 1024 * 1024 },
      );
      const result = JSON.parse(stdout.trim().split('\n').at(-1) as string) as {
        cpu: number[];
        bytes: number;
        maxRssKb: number;
        extraKb: number;
      };
      const types = await typesRead(out);
      const lost = types.lost.length
        ? ` (${types.lost.slice(0, 6).join('; ')}${types.lost.length > 6 ? '; …' : ''})`
        : '';
      console.log(
        `| ${library} | ${median(result.cpu).toFixed(0)} | ${(result.bytes / 1024).toFixed(0)} | ${(result.maxRssKb / 1024).toFixed(0)} | ${(result.extraKb / 1024).toFixed(0)} | ${types.kept}/${types.total}${lost} |`,
      );
    } catch (error) {
      console.log(`| ${library} | failed: ${String((error as Error).message).split('\n')[0]} | | | |`);
    }
  }
}

await main();
