import { type Column, col, type TableDef, type TableRow } from './columns.ts';
import { calendarDate, epochMillis, integerOrNull, numberOrNull, stringListOrNull, stringOrNull } from './values.ts';

/**
 * The `signals` table: one row per signal, keyed by `signal_id`. The `data` fields the spec names (section 2.2) are
 * typed columns; a value of another type than the spec's stays in `data` (the rest, as one JSON text), so a signal
 * whose service answer drifts is kept whole and never changes the table's schema.
 */

/** `data` fields with a column of their own: field → column type. */
const DATA_FIELDS: ReadonlyArray<readonly [string, Column['type'], string]> = [
  ['summary', 'string', 'data.summary'],
  ['detail', 'string', 'data.detail (SEC signals)'],
  ['evidence', 'string', 'data.evidence: the changed text quoted (website changes)'],
  ['impact_rationale', 'string', 'data.impact_rationale (website changes)'],
  ['source_url', 'string', 'data.source_url: the filing or the page that changed'],
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
    col('signal_id', 'string', 'the signal id: the key of this table', false),
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
    ...DATA_FIELDS.map(([field, type, description]) => col(field, type, description)),
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
  const rest: Record<string, unknown> = { ...(signal.data ?? {}) };
  for (const [field, type] of DATA_FIELDS) row[field] = take(rest, field, type);
  const metrics = rest['metrics'];
  if (isObject(metrics)) {
    const left: Record<string, unknown> = { ...metrics };
    for (const [field, type] of METRIC_FIELDS) row[`metrics_${field}`] = take(left, field, type);
    if (Object.keys(left).length > 0) rest['metrics'] = left;
    else delete rest['metrics'];
  } else {
    for (const [field] of METRIC_FIELDS) row[`metrics_${field}`] = null;
  }
  row['data'] = rest;
  return row;
}

/** The field's value when it has the column's type (removed from `rest`), else null (and it stays in `rest`). */
function take(rest: Record<string, unknown>, field: string, type: Column['type']): unknown {
  const value = rest[field];
  if (value === undefined) return null;
  const typed = typedValue(value, type);
  if (typed !== null) delete rest[field]; // an explicit null stays in data: nothing is lost
  return typed;
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
