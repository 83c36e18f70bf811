import { columnTable, type TableDef, type TableRow } from './columns.ts';
import { flattener } from './flatten.ts';

/**
 * The `signals` table: one row per signal, keyed by `signal_id`. The `data` fields the spec names (section 2.2) are
 * typed columns; a value of another type than the spec's stays in `data` (the rest, as one JSON text), so a signal
 * whose service answer drifts is kept whole and never changes the table's schema. `@` columns come from where the
 * signal was found (`SignalContext`).
 */
export const SIGNALS_TABLE: TableDef = {
  table: 'signals',
  columns: columnTable(`
    signal_id               text!        signal_id                the signal id: the key of this table
    record_id               string       <@record_id              the CRM record id of the input row the signal was found for (enrich; else null)
    row                     int          @row                     1-based data row of the input the signal was found for (enrich; else null)
    domain                  string       @domain                  the domain the signal was found for (the row, watchlist or event company domain)
    signal_type             string!      signal_type              type slug, e.g. news, sec-8k
    signal_subtype          string       signal_subtype           event within the type, e.g. cfoChange
    signal_name             text         signal_name              display name (often empty)
    association             string       association              company or contact
    detected_at             timestamp    detected_at              when the service detected the signal (UTC)
    company_name            string       company.name             the signal's company name
    company_domain          string       company.domain           the signal's company domain
    summary                 text         data.summary             data.summary
    detail                  text         data.detail              data.detail (SEC signals)
    evidence                text         data.evidence            data.evidence: the changed text quoted (website changes)
    impact_rationale        text         data.impact_rationale    data.impact_rationale (website changes)
    source_url              text         data.source_url          data.source_url: the filing or the page that changed
    relevance               double       data.relevance           data.relevance, 0 to 1
    sentiment               string       data.sentiment           data.sentiment, e.g. negative
    confidence              string       data.confidence          data.confidence, e.g. high
    sales_relevance         string       data.sales_relevance     data.sales_relevance
    signal_category         string       data.signal_category     data.signal_category, lower case, e.g. leadership
    filing_date             date         data.filing_date         data.filing_date
    filing_year             int          data.filing_year         data.filing_year
    fiscal_year             int          data.fiscal_year         data.fiscal_year
    highlights              string_list  data.highlights          data.highlights (SEC filings)
    trending_titles         string_list  data.trending_titles     data.trending_titles (hiring)
    vendors_mentioned       string_list  data.vendors_mentioned   data.vendors_mentioned (SEC signals)
    metrics_timeframe       string       data.metrics.timeframe         data.metrics.timeframe, e.g. next_quarter
    metrics_dollar_context  string       data.metrics.dollar_context    data.metrics.dollar_context
    metrics_dollar_millions double       data.metrics.dollar_millions   data.metrics.dollar_millions
    data                    json         rest:data                the rest of data (fields without a column, or of another type than the spec names): a JSON object
  `),
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

const flattenSignal = flattener(SIGNALS_TABLE);

export function signalRow(signal: SignalLike, at: SignalContext): TableRow {
  return flattenSignal(signal, at);
}
