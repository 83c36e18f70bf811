import type { Readable } from 'node:stream';
import { ColumnError, InputError } from '../../connectors/errors.ts';
import { checkInflatedSize, isGzipKey, openDecoded, readCsvRecords, readJsonlRecords } from '../../connectors/jsonl.ts';
import {
  type ColumnChoice,
  type ColumnRequest,
  chooseColumns,
  type IdentifierRole,
} from '../../connectors/normalize/columns.ts';
import { ObjectNotFoundError } from '../../connectors/storage/errors.ts';
import type { Store } from '../../connectors/storage/store.ts';
import { decodeToUtf8, type InputEncoding } from './encoding.ts';

/**
 * One input row: its number (1-based data row; CSV header excluded), the values of its identifier columns in the order
 * they are tried, its record id and kept columns, or why it cannot be read. `raw` is the row as read, for messages.
 */
export interface InputRecord {
  row: number;
  candidates?: { role: IdentifierRole; raw: unknown }[];
  id?: string;
  cols?: Record<string, string>;
  raw?: unknown;
  error?: string;
}

export interface InputSource {
  url: string;
  format: 'csv' | 'jsonl' | 'xlsx';
  /** The file's bytes as stored (gunzipped); `text` decodes them. */
  body: Readable;
  /** The file's text as UTF-8, decoded from its encoding (encoding.ts). */
  text: AsyncIterable<Buffer>;
  /** An .xlsx workbook's sheet to read (`--sheet`); the first when absent. */
  sheet?: string | undefined;
}

/**
 * The deepest nesting of arrays/objects an input line may have. A domain or an address is a string; a deeper line
 * is an `invalid` row rather than a value for every later step to walk.
 */
export const MAX_INPUT_DEPTH = 32;

/** Opens an input URL (file://, s3://, gs:// or a path) by splitting it into a store and a key. */
export async function openInput(
  openStore: (url: string) => Store,
  url: string,
  encoding: InputEncoding = 'auto',
  sheet?: string,
): Promise<InputSource> {
  const slash = url.lastIndexOf('/');
  const base = slash > url.indexOf('://') + 2 ? url.slice(0, slash) : '.';
  const key = url.slice(slash + 1);
  const name = key.toLowerCase().replace(/\.gz$/, '');
  // Excel saves "Unicode Text" as a tab-separated .txt; .tsv is the same table.
  const format = /\.(csv|tsv|txt)$/.test(name)
    ? 'csv'
    : name.endsWith('.xlsx')
      ? 'xlsx'
      : name.endsWith('.jsonl') || name.endsWith('.ndjson')
        ? 'jsonl'
        : undefined;
  if (!format)
    throw new InputError(
      `input ${url}: unsupported format (expected .csv, .tsv or .txt, .xlsx, or .jsonl/.ndjson, optionally .gz)`,
    );
  try {
    const store = openStore(base);
    // A compressed export is inflated through once, counted, before a row of it is read (gzipInflateLimit).
    const info = isGzipKey(key) ? await store.stat(key) : undefined;
    const inflateCap = info && { what: `input ${url}`, storedBytes: info.size };
    if (inflateCap) await checkInflatedSize(store, key, inflateCap);
    const body = await openDecoded(store, key, inflateCap);
    return { url, format, body, text: decodeToUtf8(body, url, encoding), ...(sheet !== undefined ? { sheet } : {}) };
  } catch (error) {
    if (error instanceof ObjectNotFoundError) throw new InputError(`input ${url} does not exist`);
    throw error;
  }
}

/**
 * Each row's identifier values, record id and kept columns, by the columns `request` chooses from the header (CSV) or
 * from each line's fields (JSONL; a line that is a bare string is a value of the first role). A row that cannot be
 * read (a broken CSV quote, a non-JSON line, no identifier field) becomes a record with `error`, so it is reported as
 * invalid, never dropped. `onColumns` hears the CSV's choice once, before the first row. A CSV whose header has no
 * usable column is an `InputError` listing its columns.
 */
export async function* readInputRecords(
  source: InputSource,
  request: ColumnRequest,
  onColumns?: (choice: ColumnChoice) => void,
  onSkipped?: (lines: number) => void,
): AsyncGenerator<InputRecord> {
  if (source.format === 'xlsx') {
    // Loaded only for a workbook: the reader and its zip and XML parsers cost every worker ~36 MiB at start.
    const { readSheetRows } = await import('./xlsx.ts');
    let choice: ColumnChoice | undefined;
    try {
      for await (const { row, record } of readSheetRows(
        source.body,
        source.url,
        (lines) => onSkipped?.(lines),
        source.sheet,
      )) {
        if (choice === undefined) {
          choice = chooseOrFail(source.url, Object.keys(record), request);
          onColumns?.(choice);
        }
        yield recordOf(row, record, choice);
      }
    } finally {
      source.body.destroy();
    }
    return;
  }
  if (source.format === 'csv') {
    const { delimiter, body } = await sniffDelimiter(source.text);
    let choice: ColumnChoice | undefined;
    // Lines that may be a report's footer, held until a record follows them (then they are rows) or the file ends.
    let held: { row: number; error: string; raw?: string }[] = [];
    const release = function* (): Generator<InputRecord> {
      for (const line of held) yield cleanRaw({ row: line.row, error: line.error, raw: line.raw });
      held = [];
    };
    try {
      for await (const entry of readCsvRecords(body, { delimiter })) {
        if (entry.error === 'blank line') {
          onSkipped?.(1); // never a record, wherever it stands
          continue;
        }
        if (entry.error !== undefined || !entry.record) {
          const line = {
            row: entry.row,
            error: entry.error ?? 'unreadable row',
            ...(entry.raw ? { raw: entry.raw } : {}),
          };
          if (isFooterLine(entry.raw, delimiter) && held.length < MAX_FOOTER_LINES) held.push(line);
          else {
            yield* release();
            yield cleanRaw(line);
          }
          continue;
        }
        yield* release();
        if (choice === undefined) {
          choice = chooseOrFail(source.url, Object.keys(entry.record), request);
          onColumns?.(choice);
        }
        yield recordOf(entry.row, entry.record, choice);
      }
      // Short lines of one value at the file's end are a report's footer ("Total", "Confidential Information - Do
      // Not Distribute", the copyright line): skipped, and counted as such.
      if (held.length > 0) onSkipped?.(held.length);
      held = [];
    } finally {
      // A reader that stops early (the first batches of a big input) closes the file, not the garbage collector.
      source.body.destroy();
    }
    return;
  }
  const choices = new Map<string, ColumnChoice | string>();
  for await (const entry of readJsonlRecords(source.text, { maxDepth: MAX_INPUT_DEPTH })) {
    if (entry.error !== undefined) {
      yield cleanRaw({ row: entry.line, error: entry.error, raw: entry.raw });
      continue;
    }
    const value = entry.value;
    const firstRole = request.roles[0];
    if (typeof value === 'string' && firstRole) {
      yield value.includes(NUL)
        ? {
            row: entry.line,
            error: 'the line holds a NUL character (U+0000), which no input may hold',
            raw: withoutNul(value),
          }
        : { row: entry.line, candidates: [{ role: firstRole, raw: value }], raw: value };
      continue;
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      yield { row: entry.line, error: 'line is not a JSON object or string', raw: JSON.stringify(value) };
      continue;
    }
    const fields = value as Record<string, unknown>;
    // Lines of one file usually share their fields: the choice is made once per set of field names.
    const names = Object.keys(fields);
    const signature = names.join('\u0000');
    let choice = choices.get(signature);
    if (choice === undefined) {
      try {
        choice = chooseColumns(names, request);
      } catch (error) {
        if (!(error instanceof ColumnError)) throw error;
        choice = error.message.replace(/; name the column with .*$/, '').replace(/column/g, 'field');
      }
      if (choices.size < 64) choices.set(signature, choice);
    }
    if (typeof choice === 'string') {
      yield { row: entry.line, error: choice, raw: JSON.stringify(value) };
      continue;
    }
    const record = recordOf(entry.line, fields, choice);
    // A refused line keeps the value that holds the NUL, without it, as its raw (its JSON would spell `\u0000`).
    yield record.error === undefined ? { ...record, raw: JSON.stringify(value) } : record;
  }
}

/** The most lines at a file's end taken as a report's footer. */
const MAX_FOOTER_LINES = 20;

/**
 * A line a report writes below its rows: shorter than the header (the parser refused its length) with one value at
 * most, such as `"Total"` or `"Confidential Information - Do Not Distribute"`.
 */
function isFooterLine(raw: string | undefined, delimiter: string): boolean {
  if (raw === undefined) return false;
  const line = raw.replace(/\r?\n$/, '');
  if (line.includes('\n')) return false;
  let values = 0;
  let quoted = false;
  let field = '';
  for (const char of `${line}${delimiter}`) {
    if (char === '"') quoted = !quoted;
    else if (char === delimiter && !quoted) {
      if (field.trim() !== '') values += 1;
      field = '';
    } else field += char;
  }
  return values <= 1;
}

/** The header's column choice, or an `InputError` that lists the columns and names the flag. */
export function chooseOrFail(url: string, header: string[], request: ColumnRequest): ColumnChoice {
  try {
    return chooseColumns(header, request);
  } catch (error) {
    if (error instanceof ColumnError) throw new InputError(`input ${url}: ${error.message}`, { cause: error });
    throw error;
  }
}

/**
 * NUL is refused in every encoding (docs/security.md): a row holding one in a column the kit reads (an identifier, the
 * id, a kept column) is an invalid record naming the column, never asked of the service; the values it carries into
 * the outputs hold U+FFFD where the NUL was, as `load` writes them, so no file ever gets a NUL from the input.
 */
const NUL = '\u0000';
const withoutNul = (text: string) => text.replaceAll(NUL, '\uFFFD');

function nulColumn(fields: Record<string, unknown>, choice: ColumnChoice): string | undefined {
  const read = [...Object.values(choice.identifiers).flat(), choice.recordId, ...choice.kept];
  return read.find((column) => {
    const value = column === undefined ? undefined : fields[column];
    return typeof value === 'string' && value.includes(NUL);
  });
}

function nulRecord(record: InputRecord, column: string): InputRecord {
  const cols = record.cols
    ? Object.fromEntries(Object.entries(record.cols).map(([name, value]) => [name, withoutNul(value)]))
    : undefined;
  const raw = typeof record.raw === 'string' ? withoutNul(record.raw) : record.raw;
  return {
    row: record.row,
    ...(record.id !== undefined ? { id: withoutNul(record.id) } : {}),
    ...(cols ? { cols } : {}),
    raw: raw ?? null,
    error: `column "${withoutNul(column)}" holds a NUL character (U+0000), which no input may hold`,
  };
}

/** A row read without a record (a broken line): its raw text without NUL. */
function cleanRaw<R extends { raw?: unknown }>(line: R): R {
  return typeof line.raw === 'string' && line.raw.includes(NUL) ? { ...line, raw: withoutNul(line.raw) } : line;
}

function recordOf(row: number, fields: Record<string, unknown>, choice: ColumnChoice): InputRecord {
  const record = fieldsRecord(row, fields, choice);
  const nul = nulColumn(fields, choice);
  return nul === undefined ? record : nulRecord(record, nul);
}

function fieldsRecord(row: number, fields: Record<string, unknown>, choice: ColumnChoice): InputRecord {
  const candidates: { role: IdentifierRole; raw: unknown }[] = [];
  for (const [role, columns] of Object.entries(choice.identifiers) as [IdentifierRole, string[]][]) {
    for (const column of columns) candidates.push({ role, raw: fields[column] });
  }
  const id = choice.recordId === undefined ? undefined : cell(fields[choice.recordId]);
  let cols: Record<string, string> | undefined;
  if (choice.kept.length > 0) {
    cols = {};
    // Kept as read, spaces included: the CRM file gives the user's values back byte for byte.
    for (const column of choice.kept) {
      const value = fields[column];
      cols[column] = typeof value === 'string' ? value : (cell(value) ?? '');
    }
  }
  const first = candidates.find((candidate) => cell(candidate.raw) !== undefined) ?? candidates[0];
  return {
    row,
    candidates,
    ...(id !== undefined ? { id } : {}),
    ...(cols ? { cols } : {}),
    raw: first?.raw ?? null,
  };
}

/** A cell as a string: trimmed for ids; empty is absent. */
function cell(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  const text =
    typeof value === 'string' ? value.trim() : typeof value === 'object' ? JSON.stringify(value) : String(value);
  return text === '' ? undefined : text;
}

/**
 * The field separator of a CSV, from its header line: a comma unless the header holds more semicolons or tabs (Excel
 * writes ";" where the decimal mark is a comma, and "Unicode text" as tab-separated). The bytes read to decide are
 * handed on in front of the rest.
 */
export async function sniffDelimiter(
  body: AsyncIterable<Buffer | string>,
): Promise<{ delimiter: string; body: AsyncIterable<Buffer> }> {
  const iterator = body[Symbol.asyncIterator]() as AsyncIterator<Buffer | string>;
  const head: Buffer[] = [];
  let size = 0;
  let ended = false;
  while (size < 64 * 1024) {
    const next = await iterator.next();
    if (next.done) {
      ended = true;
      break;
    }
    const chunk = typeof next.value === 'string' ? Buffer.from(next.value) : next.value;
    head.push(chunk);
    size += chunk.length;
    if (chunk.includes(0x0a) || chunk.includes(0x0d)) break;
  }
  const text = Buffer.concat(head).toString('utf8');
  const delimiter = delimiterOf(text.split(/\r?\n|\r/, 1)[0] ?? '');
  async function* replay(): AsyncGenerator<Buffer> {
    for (const chunk of head) yield chunk;
    if (ended) return;
    for (;;) {
      const next = await iterator.next();
      if (next.done) return;
      yield typeof next.value === 'string' ? Buffer.from(next.value) : next.value;
    }
  }
  return { delimiter, body: replay() };
}

/** The separator used most often outside quotes in a header line (a comma on a tie or none). */
export function delimiterOf(line: string): string {
  const counts: Record<string, number> = { ',': 0, ';': 0, '\t': 0 };
  let quoted = false;
  for (const char of line) {
    if (char === '"') quoted = !quoted;
    else if (!quoted && char in counts) counts[char] = (counts[char] ?? 0) + 1;
  }
  let best = ',';
  for (const candidate of [';', '\t']) if ((counts[candidate] ?? 0) > (counts[best] ?? 0)) best = candidate;
  return best;
}
