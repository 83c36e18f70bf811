import { type Column, columnTable, type TableDef, type TableRow, withKeptColumns } from './columns.ts';
import { flattener } from './flatten.ts';
import { type SignalContext, type SignalLike, signalRow } from './signals.ts';
import { epochMillis, integerOrNull, isObject, stringOrNull } from './values.ts';

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

/** Columns more than one table has, each written once: where the row was in the input, its outcome, its error. */
const ROW_KEYS = `
  record_id               string       <record_id               the row's CRM record id (null when the input has no id column)
  row                     int!         row                      1-based data row of the input (the CSV header is not counted)
`;
const ROW_START = `${ROW_KEYS}
  status                  string!      status                   the row's outcome (the output line's status)
`;
const ROW_END = `
  error_code              string       error.code               error rows: the error code
  error_message           text         error.message            error rows: what failed
`;
const ROW_INPUT = `
  input                   text         <input                   the value as the input had it
`;

/** The company a row was answered with: the enrich row's company, a contact row's employer. */
const COMPANY = `
  company_name            string       company.name             the company's name
  company_domain          string       company.domain           the company's root domain
  company_linkedin_url    string       company.linkedin_url     the company's LinkedIn URL (absolute)
`;

/** `@` columns are worked out from the whole line first (`enrichDerived`): counts per type, their total, the newest signal. */
const SIGNAL_COLUMNS = `
  signal_count            int          @signal_count            signals in this output (null when not answered)
${COUNTED_SIGNAL_TYPES.map((type) => `  ${countColumn(type)}  int  @count.${type}  signals of type ${type}`).join('\n')}
  signals_other           int          @signals_other           signals of the types without a column of their own
  signal_counts           json         @counts                  signal type → count, every type: a JSON object
  latest_signal_at        timestamp    @latest.detected_at      the newest signal's detected_at (UTC)
  latest_signal_type      string       @latest.signal_type      the newest signal's type
  latest_signal_summary   text         @latest.data.summary     the newest signal's data.summary
  duplicate_of            int          duplicate_of             duplicate rows: the row whose line answers this record
  answer_status           string       answer_status            duplicate rows: the status of the answering line
`;

const ENRICH_ROWS_COLUMNS = columnTable(`${ROW_START}
  matched_by              string       matched_by               the identifier of the row that was used: domain, linkedin_url or company_name
${ROW_INPUT}
  domain                  string       domain                   the domain the service resolved (null when unresolved)
${COMPANY}${SIGNAL_COLUMNS}${ROW_END}`);

/** The person the service knows (spec 2.5), beside their employer and their person-level signals. */
const PERSON = `
  first_name              string       contact.first_name       the person's first name
  last_name               string       contact.last_name        the person's last name
  full_name               string       contact.full_name        the person's full name
  email                   string       contact.email            the person's email address
  job_title               string       contact.job_title        the person's job title
  linkedin_url            string       contact.linkedin_url     the person's LinkedIn profile URL (absolute)
  city                    string       contact.city             the person's city
  state                   string       contact.state            the person's state or region
  country                 string       contact.country          the person's country
`;

const CONTACT_ROWS_COLUMNS = columnTable(`${ROW_START}
  matched_by              string       matched_by               the identifier of the row that was used: email or linkedin_url (the person's profile)
${ROW_INPUT}${PERSON}
  domain                  string       domain                   the employer's domain as the service resolved it (null when unresolved)
${COMPANY}${SIGNAL_COLUMNS}${ROW_END}`);

const VERIFY_ROWS_COLUMNS = columnTable(`${ROW_START}${ROW_INPUT}
  email                   string       email                    the normalized address
  result                  string       result                   deliverable, undeliverable, risky or unknown
  confidence              double       confidence               0 to 1
  reason                  string       reason                   the service's reason
  risk_level              string       risk_level               the service's risk level
  validated_at            timestamp    validated_at             when the service validated the address (UTC)
  details                 json         details                  the service's details: a JSON object
${ROW_END}`);

const INVALID_COLUMNS = columnTable(`${ROW_KEYS}
  raw                     json         <raw                     the row as read (long values cut): a JSON value
  error                   string!      error                    why the row holds no usable value
`);

export type RowsKind = 'enrich' | 'enrich-contacts' | 'verify-emails';

const ROWS_COLUMNS: Record<RowsKind, Column[]> = {
  enrich: ENRICH_ROWS_COLUMNS,
  'enrich-contacts': CONTACT_ROWS_COLUMNS,
  'verify-emails': VERIFY_ROWS_COLUMNS,
};

export function rowsTable(kind: RowsKind, kept?: readonly string[]): TableDef {
  return { table: 'rows', columns: withKeptColumns(ROWS_COLUMNS[kind], kept) };
}

export function invalidTable(kept?: readonly string[]): TableDef {
  return { table: 'invalid', columns: withKeptColumns(INVALID_COLUMNS, kept) };
}

type Line = Record<string, unknown>;

/**
 * The kept columns of a job: the names the lines carry (the input's headers as chosen, `--keep-columns` matched
 * without case or spacing, and the CRM update columns kept by default), else the job's list when no line has them.
 */
export function keptColumnsOf(lines: readonly Line[], listed?: readonly string[]): string[] | undefined {
  const first = lines.find((line) => isObject(line['columns']));
  if (first) return Object.keys(first['columns'] as object);
  return listed ? [...listed] : undefined;
}

/** The rows and signals table rows of enrich or enrich-contacts lines (invalid lines go to `invalidRows`). */
export function enrichTables(lines: readonly Line[], def: TableDef): { rows: TableRow[]; signals: TableRow[] } {
  const flattenRow = flattener(def);
  const rows: TableRow[] = [];
  const signals: TableRow[] = [];
  for (const line of lines) {
    const out = flattenRow(line, enrichDerived(line));
    rows.push(out);
    if (!Array.isArray(line['signals'])) continue;
    const at: SignalContext = {
      record_id: out['record_id'] as string | null,
      row: out['row'] as number | null,
      domain: stringOrNull(line['domain']),
    };
    for (const signal of line['signals'] as SignalLike[]) signals.push(signalRow(signal, at));
  }
  return { rows, signals };
}

/** The `@` values of an enrich row: counts per type (every counted type, 0 when absent), their total, the newest signal. */
function enrichDerived(line: Line) {
  const counts = signalCounts(line);
  if (counts === null) return { counts, count: null, signal_count: null, signals_other: null, latest: undefined };
  const count: Record<string, number> = { ...ZERO_COUNTS };
  let total = 0;
  let other = 0;
  for (const type in counts) {
    const n = counts[type] as number;
    total += n;
    if (Object.hasOwn(ZERO_COUNTS, type)) count[type] = n;
    else other += n;
  }
  // A line without its signals (the nightly sync's current picture) names its newest one as `latest_signal`.
  const held = isObject(line['latest_signal']) ? (line['latest_signal'] as unknown as SignalLike) : undefined;
  return { counts, count, signal_count: total, signals_other: other, latest: newestSignal(line['signals']) ?? held };
}

const ZERO_COUNTS: Record<string, number> = Object.fromEntries(COUNTED_SIGNAL_TYPES.map((type) => [type, 0]));

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
  const flatten = flattener(def);
  return lines.map((line) => flatten(line));
}

/** The invalid table rows of invalid lines. */
export function invalidRows(lines: readonly Line[], def: TableDef): TableRow[] {
  const flatten = flattener(def);
  return lines.map((line) => flatten(line));
}

/**
 * Invalid lines as rows of the rows table (status `invalid`, the reason in `error_message`): the joined CRM file
 * gives every input row a row, while the `rows` table itself leaves them to the `invalid` table.
 */
export function invalidLinesAsRows(lines: readonly Line[], def: TableDef): TableRow[] {
  // The invalid table's own columns, with the kept columns under the names the rows table gives them.
  const kept = def.columns.filter((column) => column.source !== undefined);
  return invalidRows(lines, { table: 'invalid', columns: [...INVALID_COLUMNS, ...kept] }).map(
    ({ raw, error, ...row }) => ({
      ...row,
      status: 'invalid',
      input: stringOrNull(raw),
      error_code: 'invalid_input',
      error_message: error,
    }),
  );
}
