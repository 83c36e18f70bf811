import type { Readable } from 'node:stream';
import { InputError } from '../../connectors/errors.ts';
import { openDecoded, readCsvRecords, readJsonlRecords } from '../../connectors/jsonl.ts';
import { ObjectNotFoundError } from '../../connectors/storage/errors.ts';
import type { Store } from '../../connectors/storage/store.ts';

/** One input row: its number (1-based data row; CSV header excluded), the raw value, or why it has none. */
export interface InputRecord {
  row: number;
  raw?: unknown;
  error?: string;
}

export interface InputSource {
  url: string;
  format: 'csv' | 'jsonl';
  body: Readable;
}

/**
 * The deepest nesting of arrays/objects an input line may have. A domain or an address is a string; a deeper line
 * is an `invalid` row rather than a value for every later step to walk.
 */
export const MAX_INPUT_DEPTH = 32;

/** Opens an input URL (file://, s3://, gs:// or a path) by splitting it into a store and a key. */
export async function openInput(openStore: (url: string) => Store, url: string): Promise<InputSource> {
  const slash = url.lastIndexOf('/');
  const base = slash > url.indexOf('://') + 2 ? url.slice(0, slash) : '.';
  const key = url.slice(slash + 1);
  const name = key.toLowerCase().replace(/\.gz$/, '');
  const format = name.endsWith('.csv')
    ? 'csv'
    : name.endsWith('.jsonl') || name.endsWith('.ndjson')
      ? 'jsonl'
      : undefined;
  if (!format)
    throw new InputError(`input ${url}: unsupported format (expected .csv or .jsonl/.ndjson, optionally .gz)`);
  try {
    return { url, format, body: await openDecoded(openStore(base), key) };
  } catch (error) {
    if (error instanceof ObjectNotFoundError) throw new InputError(`input ${url} does not exist`);
    throw error;
  }
}

/**
 * The value of each row: the first of `columns` the input has. A row that cannot be read (a broken CSV quote, a
 * non-JSON line, a missing field) becomes a record with `error`, so it is reported as invalid, never dropped.
 */
export async function* readInputRecords(source: InputSource, columns: string[]): AsyncGenerator<InputRecord> {
  if (source.format === 'csv') {
    let column: string | undefined;
    for await (const entry of readCsvRecords(source.body)) {
      if (entry.error !== undefined || !entry.record) {
        yield { row: entry.row, error: entry.error ?? 'unreadable row', raw: entry.raw };
        continue;
      }
      if (column === undefined) {
        const header = Object.keys(entry.record);
        column = columns.find((name) => header.includes(name));
        if (column === undefined) {
          throw new InputError(
            `input ${source.url}: no column named ${columns.map((c) => `"${c}"`).join(' or ')} (columns: ${header.join(', ')})`,
          );
        }
      }
      yield { row: entry.row, raw: entry.record[column] };
    }
    return;
  }
  for await (const entry of readJsonlRecords(source.body, { maxDepth: MAX_INPUT_DEPTH })) {
    if (entry.error !== undefined) {
      yield { row: entry.line, error: entry.error, raw: entry.raw };
      continue;
    }
    const value = entry.value;
    if (typeof value === 'string') {
      yield { row: entry.line, raw: value };
      continue;
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      yield { row: entry.line, error: 'line is not a JSON object or string', raw: JSON.stringify(value) };
      continue;
    }
    const field = columns.find((name) => name in value);
    if (field === undefined) {
      yield {
        row: entry.line,
        error: `no field ${columns.map((c) => `"${c}"`).join(' or ')}`,
        raw: JSON.stringify(value),
      };
      continue;
    }
    yield { row: entry.line, raw: (value as Record<string, unknown>)[field] };
  }
}
