import { type Column, col, type TableDef, type TableRow, text } from './columns.ts';
import { calendarDate, epochMillis, integerOrNull, numberOrNull, stringListOrNull, stringOrNull } from './values.ts';

/**
 * The `signals` table: one row per signal, keyed by `signal_id`. The `data` fields the spec names (section 2.2) are
 * typed columns; a value of another type than the spec's stays in `data` (the rest, as one JSON text), so a signal
 * whose service answer drifts is kept whole and never changes the table's schema.
 */

/** `data` fields with a column of their own: field → column type. */
const DATA_FIELDS: ReadonlyArray<readonly [string, Column['type'], string, 'text'?]> = [
  ['summary', 'string', 'data.summary', 'text'],
  ['detail', 'string', 'data.detail (SEC signals)', 'text'],
  ['evidence', 'string', 'data.evidence: the changed text quoted (website changes)', 'text'],
  ['impact_rationale', 'string', 'data.impact_rationale (website changes)', 'text'],
  ['source_url', 'string', 'data.source_url: the filing or the page that changed', 'text'],
  ['relevance', 'double', 'data.relevance, 0 to 1'],
  ['sentiment', 'string', 'data.sentiment, e.g. negative'],
  ['confidence', 'string', 'data.confidence, e.g. high'],
  ['sales_relevance', 'string', 'data.sales_relevance'],
  ['signal_category', 'string', 'data.signal_category, lower case, e.g. leadership'],
  ['filing_date', 'date', 'data.filing_date'],
  ['filing_year', 'int', 'data.filing_year'],
  ['fiscal_year', 'int', 'data.fiscal_year'],
  ['highlights', 'string_list', 'data.highlights (SEC filings)'],
  ['trending_titles', 'string_list', 'data.trending_titles (hiring)'],
  ['vendors_mentioned', 'string_list', 'data.vendors_mentioned (SEC signals)'],
];

/** `data.metrics` fields with a column of their own. */
const METRIC_FIELDS: ReadonlyArray<readonly [string, Column['type'], string]> = [
  ['timeframe', 'string', 'data.metrics.timeframe, e.g. next_quarter'],
  ['dollar_context', 'string', 'data.metrics.dollar_context'],
  ['dollar_millions', 'double', 'data.metrics.dollar_millions'],
];

export const SIGNALS_TABLE: TableDef = {
  table: 'signals',
  columns: [
    { ...col('signal_id', 'string', 'the signal id: the key of this table', false), text: true },
    col('record_id', 'string', 'the CRM record id of the input row the signal was found for (enrich; else null)'),
    col('row', 'int', '1-based data row of the input the signal was found for (enrich; else null)'),
    col('domain', 'string', 'the domain the signal was found for (the row, watchlist or event company domain)'),
    col('signal_type', 'string', 'type slug, e.g. news, sec-8k', false),
    col('signal_subtype', 'string', 'event within the type, e.g. cfoChange'),
    col('signal_name', 'string', 'display name (often empty)'),
    col('association', 'string', 'company or contact'),
    col('detected_at', 'timestamp', 'when the service detected the signal (UTC)'),
    col('company_name', 'string', "the signal's company name"),
    col('company_domain', 'string', "the signal's company domain"),
    ...DATA_FIELDS.map(([field, type, description, free]) =>
      free ? text(field, description) : col(field, type, description),
    ),
    ...METRIC_FIELDS.map(([field, type, description]) => col(`metrics_${field}`, type, description)),
    col(
      'data',
      'json',
      'the rest of data (fields without a column, or of another type than the spec names): a JSON object',
    ),
  ],
};

/** Where a signal was found: the row (enrich) or the domain alone (push, webhook). */
export interface SignalContext {
  record_id: string | null;
  row: number | null;
  domain: string | null;
}

/** The signal fields the kit reads; everything else of `data` lands in the `data` column. */
export interface SignalLike {
  signal_id: string;
  signal_type: string;
  signal_subtype?: unknown;
  signal_name?: unknown;
  association?: unknown;
  detected_at?: unknown;
  company?: { name?: unknown; domain?: unknown } | null;
  data?: Record<string, unknown> | null;
}

export function signalRow(signal: SignalLike, at: SignalContext): TableRow {
  const row: TableRow = {
    signal_id: String(signal.signal_id),
    record_id: at.record_id,
    row: at.row,
    domain: at.domain,
    signal_type: String(signal.signal_type),
    signal_subtype: stringOrNull(signal.signal_subtype),
    signal_name: stringOrNull(signal.signal_name),
    association: stringOrNull(signal.association),
    detected_at: epochMillis(signal.detected_at),
    company_name: stringOrNull(signal.company?.name),
    company_domain: stringOrNull(signal.company?.domain),
  };
  for (const [field] of DATA_FIELDS) row[field] = null;
  for (const [field] of METRIC_FIELDS) row[`metrics_${field}`] = null;
  // One pass over data: each field goes to its column when it has the column's type, else into the rest (an explicit
  // null included: nothing of data is lost). No `delete`: it would turn the objects slow.
  const rest: Record<string, unknown> = {};
  const data = signal.data ?? {};
  for (const field in data) {
    const value = data[field];
    const type = DATA_TYPES.get(field);
    if (type !== undefined) {
      const typed = typedValue(value, type);
      if (typed !== null) {
        row[field] = typed;
        continue;
      }
    } else if (field === 'metrics' && isObject(value)) {
      const left = splitMetrics(value, row);
      // An empty metrics object stays as it was; a metrics object whose fields all have columns is not repeated.
      if (left !== undefined || Object.keys(value).length === 0) rest[field] = left ?? value;
      continue;
    }
    rest[field] = value;
  }
  row['data'] = rest;
  return row;
}

const DATA_TYPES = new Map(DATA_FIELDS.map(([field, type]) => [field, type]));
const METRIC_TYPES = new Map(METRIC_FIELDS.map(([field, type]) => [field, type]));

/** Puts `data.metrics`' typed fields into their columns; returns what is left of it (undefined when nothing). */
function splitMetrics(metrics: Record<string, unknown>, row: TableRow): Record<string, unknown> | undefined {
  let left: Record<string, unknown> | undefined;
  for (const field in metrics) {
    const value = metrics[field];
    const type = METRIC_TYPES.get(field);
    const typed = type === undefined ? null : typedValue(value, type);
    if (typed !== null) row[`metrics_${field}`] = typed;
    else {
      left ??= {};
      left[field] = value;
    }
  }
  return left;
}

function typedValue(value: unknown, type: Column['type']): unknown {
  switch (type) {
    case 'string':
      return typeof value === 'string' ? value : null;
    case 'double':
      return numberOrNull(value);
    case 'int':
      return integerOrNull(value);
    case 'date':
      return calendarDate(value);
    case 'string_list':
      return stringListOrNull(value);
    default:
      return null;
  }
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
