import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { createReadStream, createWriteStream } from 'node:fs';
import { finished } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { fileWriter } from 'hyparquet-writer';
import type { TableDef, TableRow } from '../../contract/tables/columns.ts';
import { csvHeader, csvRow, jsonlLine, type OutputFormat } from './encode.ts';
import { parquetTableWriter } from './parquet.ts';

/** Rows a Parquet part holds in memory at most: one row group's. */
export const PARQUET_GROUP_ROWS = 5_000;

/**
 * A table's part written to a local file row by row, in `format` as `encodeTable` writes it with gzip (CSV plain,
 * JSONL gzipped, Parquet a row group per `PARQUET_GROUP_ROWS` rows): a part of many rows never holds them at once.
 * `finish` ends the file and returns its size and sha256.
 */
export interface TablePartWriter {
  add(row: TableRow): Promise<void>;
  finish(): Promise<{ bytes: number; sha256: string }>;
}

export function openTablePart(format: OutputFormat, def: TableDef, path: string): TablePartWriter {
  if (format === 'parquet') return parquetPart(def, path);
  const file = createWriteStream(path, { mode: 0o600 });
  const gzip = format === 'jsonl' ? createGzip() : undefined;
  if (gzip) gzip.pipe(file);
  const out = gzip ?? file;
  const write = async (text: string) => {
    if (!out.write(text)) await once(out, 'drain');
  };
  if (format === 'csv') out.write(`${csvHeader(def.columns.map((column) => column.name))}\r\n`);
  return {
    async add(row) {
      await write(format === 'csv' ? `${csvRow(def, row)}\r\n` : `${jsonlLine(def, row)}\n`);
    },
    async finish() {
      out.end();
      await finished(file);
      return fileProof(path);
    },
  };
}

function parquetPart(def: TableDef, path: string): TablePartWriter {
  const writer = parquetTableWriter(def, fileWriter(path));
  let group: TableRow[] = [];
  return {
    async add(row) {
      group.push(row);
      if (group.length < PARQUET_GROUP_ROWS) return;
      writer.write(group);
      group = [];
    },
    async finish() {
      if (group.length > 0) writer.write(group);
      writer.finish();
      return fileProof(path);
    },
  };
}

async function fileProof(path: string): Promise<{ bytes: number; sha256: string }> {
  const hash = createHash('sha256');
  let bytes = 0;
  for await (const chunk of createReadStream(path) as AsyncIterable<Buffer>) {
    hash.update(chunk);
    bytes += chunk.length;
  }
  return { bytes, sha256: hash.digest('hex') };
}
