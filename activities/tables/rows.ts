import { type Column, col, type TableDef, type TableRow, text, withKeptColumns } from './columns.ts';
import { type SignalLike, signalRow } from './signals.ts';
import { epochMillis, integerOrNull, numberOrNull, stringOrNull } from './values.ts';

/**
 * The `rows` tables (one row per answered input row: the CRM round trip's summary) and the `invalid` table (one row
 * per input row without a usable value). Together they hold every input row once.
 */

/** Signal types the spec names (section 2.1): each has a count column in the enrich rows table. */
export const COUNTED_SIGNAL_TYPES = [
  'news',
  'hiring-trends',
  'hiring-velocity',
  'linkedin-post-company',
  'linkedin-post-contact',
  'linkedin-posts',
  'work-milestones',
  'sec-10k',
  'sec-10q',
  'sec-8k',
  'sec-6k',
  'sec-20f',
  'website-intelligence',
] as const;

export const countColumn = (type: string) => `signals_${type.replaceAll('-', '_')}`;

const ROW_COLUMNS = {
  record_id: col('record_id', 'string', "the row's CRM record id (null when the input has no id column)"),
  row: col('row', 'int', '1-based data row of the input (the CSV header is not counted)', false),
  status: col('status', 'string', "the row's outcome (the output line's status)", false),
  input: text('input', 'the value as the input had it'),
  error_code: col('error_code', 'string', 'error rows: the error code'),
  error_message: text('error_message', 'error rows: what failed'),
};

const ENRICH_ROWS_COLUMNS: Column[] = [
  ROW_COLUMNS.record_id,
  ROW_COLUMNS.row,
  ROW_COLUMNS.status,
  col('matched_by', 'string', 'the identifier of the row that was used: domain, linkedin_url or company_name'),
  ROW_COLUMNS.input,
  col('domain', 'string', 'the domain the service resolved (null when unresolved)'),
  col('company_name', 'string', "the company's name"),
  col('company_domain', 'string', "the company's root domain"),
  col('company_linkedin_url', 'string', "the company's LinkedIn URL"),
  col('signal_count', 'int', 'signals of the company in this output (null when not answered)'),
  ...COUNTED_SIGNAL_TYPES.map((type) => col(countColumn(type), 'int', `signals of type ${type}`)),
  col('signals_other', 'int', 'signals of the types without a column of their own'),
  col('signal_counts', 'json', 'signal type → count, every type: a JSON object'),
  col('latest_signal_at', 'timestamp', "the newest signal's detected_at (UTC)"),
  col('latest_signal_type', 'string', "the newest signal's type"),
  text('latest_signal_summary', "the newest signal's data.summary"),
  col('duplicate_of', 'int', 'duplicate rows: the row whose line answers this company'),
  col('answer_status', 'string', 'duplicate rows: the status of the answering line'),
  ROW_COLUMNS.error_code,
  ROW_COLUMNS.error_message,
];

const VERIFY_ROWS_COLUMNS: Column[] = [
  ROW_COLUMNS.record_id,
  ROW_COLUMNS.row,
  ROW_COLUMNS.status,
  ROW_COLUMNS.input,
  col('email', 'string', 'the normalized address'),
  col('result', 'string', 'deliverable, undeliverable, risky or unknown'),
  col('confidence', 'double', '0 to 1'),
  col('reason', 'string', "the service's reason"),
  col('risk_level', 'string', "the service's risk level"),
  col('validated_at', 'timestamp', 'when the service validated the address (UTC)'),
  col('details', 'json', "the service's details: a JSON object"),
  ROW_COLUMNS.error_code,
  ROW_COLUMNS.error_message,
];

const INVALID_COLUMNS: Column[] = [
  ROW_COLUMNS.record_id,
  ROW_COLUMNS.row,
  col('raw', 'json', 'the row as read (long values cut): a JSON value'),
  col('error', 'string', 'why the row holds no usable value', false),
];

export type RowsKind = 'enrich' | 'verify-emails';

export function rowsTable(kind: RowsKind, kept?: readonly string[]): TableDef {
  const columns = kind === 'enrich' ? ENRICH_ROWS_COLUMNS : VERIFY_ROWS_COLUMNS;
  return { table: 'rows', columns: withKeptColumns(columns, kept) };
}

export function invalidTable(kept?: readonly string[]): TableDef {
  return { table: 'invalid', columns: withKeptColumns(INVALID_COLUMNS, kept) };
}

type Line = Record<string, unknown>;

/** The kept columns of a job: the job's list when it has one, else the names the first line carries. */
export function keptColumnsOf(lines: readonly Line[], listed?: readonly string[]): string[] | undefined {
  if (listed) return [...listed];
  const first = lines.find((line) => isObject(line['columns']));
  return first ? Object.keys(first['columns'] as object) : undefined;
}

/** Fills the kept columns of a table row from a line's `columns`. */
function addKept(out: TableRow, line: Line, def: TableDef): TableRow {
  const kept = isObject(line['columns']) ? line['columns'] : {};
  for (const column of def.columns)
    if (column.source !== undefined) out[column.name] = stringOrNull(kept[column.source]);
  return out;
}

function common(line: Line): TableRow {
  const error = line['error'];
  return {
    record_id: stringOrNull(line['record_id']),
    row: integerOrNull(line['row']),
    status: String(line['status']),
    input: stringOrNull(line['input']),
    error_code: isObject(error) ? stringOrNull(error['code']) : null,
    error_message: isObject(error) ? stringOrNull(error['message']) : null,
  };
}

/** The rows and signals table rows of enrich lines (invalid lines go to `invalidRows`). */
export function enrichTables(lines: readonly Line[], def: TableDef): { rows: TableRow[]; signals: TableRow[] } {
  const rows: TableRow[] = [];
  const signals: TableRow[] = [];
  for (const line of lines) {
    const out = addKept(enrichRow(line), line, def);
    rows.push(out);
    if (!Array.isArray(line['signals'])) continue;
    const at = { record_id: out['record_id'] as string | null, row: out['row'] as number | null };
    const domain = stringOrNull(line['domain']);
    for (const signal of line['signals'] as SignalLike[]) signals.push(signalRow(signal, { ...at, domain }));
  }
  return { rows, signals };
}

function enrichRow(line: Line): TableRow {
  const company = isObject(line['company']) ? line['company'] : {};
  const out: TableRow = {
    ...common(line),
    matched_by: stringOrNull(line['matched_by']),
    domain: stringOrNull(line['domain']),
    company_name: stringOrNull(company['name']),
    company_domain: stringOrNull(company['domain']),
    company_linkedin_url: stringOrNull(company['linkedin_url']),
    duplicate_of: integerOrNull(line['duplicate_of']),
    answer_status: stringOrNull(line['answer_status']),
  };
  const counts = signalCounts(line);
  out['signal_counts'] = counts;
  let total: number | null = counts ? 0 : null;
  let other: number | null = counts ? 0 : null;
  const named = new Set<string>(COUNTED_SIGNAL_TYPES);
  for (const type of COUNTED_SIGNAL_TYPES) out[countColumn(type)] = counts ? (counts[type] ?? 0) : null;
  for (const [type, n] of Object.entries(counts ?? {})) {
    total = (total ?? 0) + n;
    if (!named.has(type)) other = (other ?? 0) + n;
  }
  out['signal_count'] = total;
  out['signals_other'] = other;
  const latest = newestSignal(line['signals']);
  out['latest_signal_at'] = latest ? epochMillis(latest.detected_at) : null;
  out['latest_signal_type'] = latest ? String(latest.signal_type) : null;
  out['latest_signal_summary'] = latest ? stringOrNull(latest.data?.['summary']) : null;
  return out;
}

/**
 * Signals per type: counted from the line's signals, else its `signal_summary` (a duplicate row carries its answer's
 * summary and no signals); none for a row the service did not answer with a company (null counts), 0 for not_found.
 */
function signalCounts(line: Line): Record<string, number> | null {
  if (Array.isArray(line['signals'])) {
    const counts: Record<string, number> = {};
    for (const signal of line['signals'] as SignalLike[]) {
      counts[signal.signal_type] = (counts[signal.signal_type] ?? 0) + 1;
    }
    return counts;
  }
  const summary = line['signal_summary'];
  if (isObject(summary)) {
    const counts: Record<string, number> = {};
    for (const [type, n] of Object.entries(summary)) {
      const count = integerOrNull(n);
      if (count !== null) counts[type] = count;
    }
    return counts;
  }
  const status = line['status'] === 'duplicate' ? line['answer_status'] : line['status'];
  return status === 'not_found' ? {} : null;
}

function newestSignal(signals: unknown): SignalLike | undefined {
  if (!Array.isArray(signals)) return undefined;
  let newest: SignalLike | undefined;
  let newestAt = Number.NEGATIVE_INFINITY;
  for (const signal of signals as SignalLike[]) {
    const at = epochMillis(signal.detected_at) ?? Number.NEGATIVE_INFINITY;
    if (newest === undefined || at > newestAt) {
      newest = signal;
      newestAt = at;
    }
  }
  return newest;
}

/** The rows table rows of verify-emails lines. */
export function verifyRows(lines: readonly Line[], def: TableDef): TableRow[] {
  return lines.map((line) =>
    addKept(
      {
        ...common(line),
        email: stringOrNull(line['email']),
        result: stringOrNull(line['result']),
        confidence: numberOrNull(line['confidence']),
        reason: stringOrNull(line['reason']),
        risk_level: stringOrNull(line['risk_level']),
        validated_at: epochMillis(line['validated_at']),
        details: isObject(line['details']) ? line['details'] : null,
      },
      line,
      def,
    ),
  );
}

/** The invalid table rows of invalid lines. */
export function invalidRows(lines: readonly Line[], def: TableDef): TableRow[] {
  return lines.map((line) =>
    addKept(
      {
        record_id: stringOrNull(line['record_id']),
        row: integerOrNull(line['row']),
        raw: line['raw'] ?? null,
        error: typeof line['error'] === 'string' ? line['error'] : JSON.stringify(line['error'] ?? null),
      },
      line,
      def,
    ),
  );
}

/**
 * Invalid lines as rows of the rows table (status `invalid`, the reason in `error_message`): the joined CRM file
 * gives every input row a row, while the `rows` table itself leaves them to the `invalid` table.
 */
export function invalidLinesAsRows(lines: readonly Line[], def: TableDef): TableRow[] {
  return invalidRows(lines, def).map(({ raw, error, ...row }) => ({
    ...row,
    status: 'invalid',
    input: stringOrNull(raw),
    error_code: 'invalid_input',
    error_message: error,
  }));
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
