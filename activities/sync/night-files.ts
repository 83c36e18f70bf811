import { createHash } from 'node:crypto';
import { type CrmFile, crmFileColumns, crmKeptColumns } from '../../connectors/crm/import-file.ts';
import type { Store } from '../../connectors/storage/store.ts';
import type { TableDef, TableRow } from '../../contract/tables/columns.ts';
import { enrichTables, invalidLinesAsRows, rowsTable } from '../../contract/tables/rows.ts';
import {
  type FilePart,
  type LocalPartFile,
  openLocalPart,
  publishFilePart,
  type Scratch,
  writeLine,
} from '../run/part-files.ts';
import { zeroCounts } from '../run/parts.ts';
import type { StateDb } from '../state/sync-db.ts';
import { csvHeader, csvRow, type OutputFormat, tableContentType } from '../tables/encode.ts';
import { openTablePart, type TablePartWriter } from '../tables/part-writer.ts';
import { syncChangesKey, syncGoneKey, syncIdsKey, syncRowsKey, syncTableKey } from './layout.ts';
import { readSyncRecords, recordDomain } from './plan.ts';
import type { FinalizeSyncRequest, SyncPlan, SyncRecord } from './types.ts';

/**
 * A night's files, streamed: each record of the records file (export order) becomes its row in `rows.csv` and, when
 * new or changed, in `changes.csv`; the records of the state gone from tonight's export are `gone.csv`; the rows
 * table in each `--format` is a part per `TABLE_PART_ROWS` rows. Each is written to a local file and published from
 * it as a part of the night (`part-files.ts`: its identity, size and sha256 in its metadata, as every part).
 *
 * The CRM files leave out the rows table's `row` (`Signal Row`, the record's position in tonight's export): a CRM
 * applying `changes.csv` every morning must end with what `rows.csv` holds in every column, and a record's position
 * changes whenever a record above it comes or goes. The rows table keeps it.
 */
export const TABLE_PART_ROWS = 50_000;

/** A file of the night, local until published: its key, where it is, and its entry in the manifest. */
export interface NightFile {
  key: string;
  path: string;
  contentType: string;
  /** The entry in the manifest: a rows-table part (`parts`), or `gone.csv` (`gone`), which is of no table. */
  part: Omit<FilePart, 'table'> & { table?: 'rows'; format: string };
  index: number;
}

interface NightRequest extends Pick<FinalizeSyncRequest, 'run' | 'kind' | 'status' | 'keepColumns'> {
  scratch: Scratch;
}

/** Writes the night's files locally; returns them with what they hold (counts; the new, changed and gone ids in `ids.csv`). */
export async function writeNightFiles(
  store: Store,
  request: NightRequest,
  db: StateDb,
  plan: SyncPlan,
  resolved: ReadonlyMap<string, string | null>,
) {
  const { run, scratch } = request;
  const file = crmFileColumns(rowsTable(request.kind, crmKeptColumns(plan.columns, request.keepColumns)), plan.columns);
  const csv = withoutPosition(file);
  const rowsFile = openCsv(scratch, 'rows.csv', csv.header);
  const changesFile = openCsv(scratch, 'changes.csv', csv.header);
  const tables = new TableParts(request, file.flat);
  const ids = new IdsFile(scratch, csv);
  const outcome = { new: 0, changed: 0, unchanged: 0, gone: 0 };
  const statuses = { ok: 0, not_found: 0, error: 0, invalid: 0 };
  const lines = { rows: 0, changes: 0 };
  const answerOf = db.db.prepare('SELECT error FROM tonight_answers WHERE domain = ?');
  db.startTonight();
  db.db.exec('BEGIN');
  for await (const record of readSyncRecords(store, run)) {
    const domain = recordDomain(record, db, resolved);
    const tonight = domain === undefined ? undefined : (answerOf.get(domain) as { error: string | null } | undefined);
    const line = lineOf(record, domain, db, tonight, request.status);
    const row = rowOf(line, file.flat);
    statuses[line['status'] as keyof typeof statuses] += 1;
    const { key, label } = recordKey(record, db);
    const print = fingerprint(row);
    const before = db.recordPrint(key);
    db.putTonight(key, print, label);
    const text = `${csvRow(csv.def, row)}\r\n`;
    await writeLine(rowsFile, text);
    lines.rows += 1;
    if (before === print) outcome.unchanged += 1;
    else {
      await writeLine(changesFile, text);
      lines.changes += 1;
      const change = before === undefined ? 'new' : 'changed';
      outcome[change] += 1;
      await ids.add(label, change);
    }
    await tables.add(row);
    if (lines.rows % 10_000 === 0) db.db.exec('COMMIT; BEGIN');
  }
  db.db.exec('COMMIT');
  const goneFile = openCsv(scratch, 'gone.csv', csv.header.slice(0, 1));
  const idColumn = csv.def.columns[0]!;
  for (const { label } of db.goneRecords()) {
    outcome.gone += 1;
    await writeLine(goneFile, `${csvRow({ table: 'rows', columns: [idColumn] }, { [idColumn.name]: label })}\r\n`);
    await ids.add(label, 'gone');
  }
  db.keepTonight();
  const files = [
    await nightFile(syncRowsKey(run), rowsFile, 'rows', lines.rows, 0),
    await nightFile(syncChangesKey(run), changesFile, 'rows', lines.changes, 1),
    await nightFile(syncGoneKey(run), goneFile, undefined, outcome.gone, 2),
    ...(await tables.finish()),
    await nightFile(syncIdsKey(run), ids.file, undefined, ids.lines, IDS_INDEX),
  ];
  const summary = { total: lines.rows, ...outcome };
  const kept = file.flat.columns.flatMap((column) => (column.source === undefined ? [] : [column.source]));
  return { files, outcome, statuses, summary, kept };
}

/** Publishes the night's files in order; returns their manifest entries. */
export async function publishNightFiles(store: Store, files: readonly NightFile[]): Promise<NightFile['part'][]> {
  const parts: NightFile['part'][] = [];
  for (const file of files) {
    const { part } = file;
    const owner = ownerOf(file.key);
    await publishFilePart(
      store,
      file.key,
      { path: file.path, bytes: part.bytes, sha256: part.sha256 },
      {
        contentType: file.contentType,
        counts: { ...zeroCounts(), lines: part.lines },
        identity: { owner, options: '', index: file.index },
        ...(part.table === 'rows' ? { table: 'rows' as const } : {}),
        ...(part.format === 'csv' || part.format === 'jsonl' || part.format === 'parquet'
          ? { format: part.format }
          : {}),
      },
    );
    parts.push(part);
  }
  return parts;
}

/** Whose a night's file is: `<name>/run-<id>`, from its key `<name>/runs/dt=…/run-<id>/…`. */
function ownerOf(key: string): string {
  const [name, , , run] = key.split('/');
  return `${name}/${run}`;
}

function openCsv(scratch: Scratch, name: string, header: readonly string[]): LocalPartFile {
  const file = openLocalPart(scratch.path(name));
  file.stream.write(`${csvHeader(header)}\r\n`);
  return file;
}

async function nightFile(
  key: string,
  local: LocalPartFile,
  table: 'rows' | undefined,
  lines: number,
  index: number,
): Promise<NightFile> {
  const { bytes, sha256 } = await local.finish();
  return {
    key,
    path: local.path,
    contentType: 'text/csv; charset=utf-8',
    part: { key, lines, bytes, sha256, ...(table ? { table } : {}), format: 'csv' },
    index,
  };
}

/** The CRM file's columns without the record's position in tonight's export (see above). */
function withoutPosition(file: CrmFile<TableDef>): { def: TableDef; header: string[] } {
  const at = file.def.columns.findIndex((column) => column.name === 'row');
  if (at === -1) return { def: file.def, header: file.header };
  return {
    def: { ...file.def, columns: file.def.columns.filter((_, i) => i !== at) },
    header: file.header.filter((_, i) => i !== at),
  };
}

/** Where `ids.csv` is among the night's parts (0–2 are the CRM files, 3 and on the rows table's parts). */
const IDS_INDEX = 1_000_000;

/**
 * `ids.csv`: the id of each new, changed and gone record (as the export wrote it, else its identifier) and which it
 * is, written as the records come; the manifest names the file (`records.ids`), never the ids.
 */
class IdsFile {
  readonly file: LocalPartFile;
  lines = 0;
  private readonly def: TableDef;
  constructor(scratch: Scratch, csv: { def: TableDef; header: string[] }) {
    const id = csv.def.columns[0]!;
    const change = { name: 'change', type: 'string', nullable: false, description: 'new, changed or gone' } as const;
    this.def = { table: 'rows', columns: [id, change] };
    this.file = openCsv(scratch, 'ids.csv', [csv.header[0]!, 'change']);
  }
  async add(label: string, change: 'new' | 'changed' | 'gone'): Promise<void> {
    const [id, which] = this.def.columns;
    this.lines += 1;
    await writeLine(this.file, `${csvRow(this.def, { [id!.name]: label, [which!.name]: change })}\r\n`);
  }
}

/**
 * The rows table in each format asked, a part per `TABLE_PART_ROWS` rows, each written to its local file as the rows
 * come (`part-writer.ts`: no part's rows are held, but for a Parquet row group's).
 */
class TableParts {
  private open: { format: OutputFormat; key: string; path: string; writer: TablePartWriter }[] = [];
  private rows = 0;
  private readonly files: NightFile[] = [];
  private index = 0;
  private readonly request: NightRequest;
  private readonly def: TableDef;
  constructor(request: NightRequest, def: TableDef) {
    this.request = request;
    this.def = def;
  }

  async add(row: TableRow): Promise<void> {
    if ((this.request.run.formats ?? []).length === 0) return;
    if (this.open.length === 0) this.start();
    for (const part of this.open) await part.writer.add(row);
    this.rows += 1;
    if (this.rows >= TABLE_PART_ROWS) await this.close();
  }

  async finish(): Promise<NightFile[]> {
    // A night always has its first part in each format (an empty export fails before, so it holds rows).
    if (this.open.length === 0 && this.index === 0 && (this.request.run.formats ?? []).length > 0) this.start();
    if (this.open.length > 0) await this.close();
    return this.files;
  }

  private start(): void {
    const { run, scratch } = this.request;
    this.open = (run.formats ?? []).map((format) => {
      const path = scratch.path(`table-${this.index}.${format}`);
      const key = syncTableKey(run, format, this.index);
      return { format, key, path, writer: openTablePart(format, this.def, path) };
    });
  }

  private async close(): Promise<void> {
    for (const { format, key, path, writer } of this.open) {
      const { bytes, sha256 } = await writer.finish();
      const part = { key, lines: this.rows, bytes, sha256, table: 'rows' as const, format };
      this.files.push({ key, path, contentType: tableContentType(format, 'gzip'), part, index: 3 + this.index });
    }
    this.open = [];
    this.rows = 0;
    this.index += 1;
  }
}

/**
 * A record's line, in the shape the enrich rows table reads: its company's current picture (`signal_summary`: counts
 * per type of everything held; `latest_signal`: the newest), or why it has none. A company the service answered with
 * an error tonight shows that error, never the picture it had before; one a budget-stopped night did not reach is
 * `budget_exhausted`.
 */
function lineOf(
  record: SyncRecord,
  domain: string | undefined,
  db: StateDb,
  tonight: { error: string | null } | undefined,
  status: FinalizeSyncRequest['status'],
): Record<string, unknown> {
  const base = {
    row: record.row,
    record_id: record.id ?? null,
    ...(record.cols ? { columns: record.cols } : {}),
    input: typeof record.raw === 'string' ? record.raw : record.raw == null ? null : JSON.stringify(record.raw),
    ...(record.matched_by ? { matched_by: record.matched_by } : {}),
  };
  if (record.error) {
    return record.error.code === 'invalid_input'
      ? { ...base, status: 'invalid', raw: record.raw ?? null, error: record.error.message }
      : { ...base, status: 'error', error: record.error };
  }
  if (domain === undefined) {
    // Named only by a LinkedIn URL or a name that resolves to no company the service knows.
    return { ...base, status: 'not_found', signal_summary: {} };
  }
  const named = record.contact ? {} : { domain };
  if (tonight?.error) return { ...base, status: 'error', ...named, error: JSON.parse(tonight.error) as unknown };
  const held = db.company(domain);
  // A night stopped by its budget before asking the company: not reached tonight, whatever an earlier night held.
  const unreached = status === 'budget_exhausted' && tonight === undefined;
  if (held && !unreached) {
    return {
      ...base,
      status: held.status,
      // A contact's row names its employer's domain; a company's, its own.
      domain: record.contact ? (held.company?.domain ?? null) : domain,
      ...(held.contact ? { contact: held.contact } : {}),
      ...(held.company ? { company: held.company } : {}),
      signal_summary: held.counts,
      ...(held.newest ? { latest_signal: held.newest } : {}),
    };
  }
  const error =
    status === 'budget_exhausted'
      ? { code: 'budget_exhausted', message: 'not asked: the run reached --max-credits; the next run asks it' }
      : { code: 'not_answered', message: 'not answered tonight (its call failed); the next run asks it' };
  return { ...base, status: 'error', ...named, error };
}

function rowOf(line: Record<string, unknown>, def: TableDef): TableRow {
  if (line['status'] === 'invalid') return invalidLinesAsRows([line], def)[0]!;
  return enrichTables([line], def).rows[0]!;
}

/**
 * The record's key in the state and its id as the export wrote it: its CRM id (`id:"A"`), else its identifier
 * (`value:"acme.com"`); the second and later twins of a key are numbered after it (`id:"A"#2`), so no id, however
 * spelled (`A#2` is `id:"A#2"`), takes a twin's key.
 */
function recordKey(record: SyncRecord, db: StateDb): { key: string; label: string } {
  const label =
    record.id ?? (typeof record.raw === 'string' ? record.raw : (record.domain ?? JSON.stringify(record.raw ?? null)));
  const base = record.id !== undefined ? `id:${JSON.stringify(record.id)}` : `value:${JSON.stringify(label)}`;
  let key = base;
  for (let n = 2; db.hasTonight(key); n++) key = `${base}#${n}`;
  return { key, label };
}

/** What a CRM import would change: the row without its position in the file. */
function fingerprint(row: TableRow): string {
  const { row: _position, ...rest } = row;
  return createHash('sha256').update(JSON.stringify(rest)).digest('hex').slice(0, 32);
}
