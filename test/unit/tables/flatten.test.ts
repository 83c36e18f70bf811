/**
 * Flattening as the tables' column lists say (docs/tables.md): a signal's typed `data` fields leave `data` only when
 * they have the spec's type, and nothing of `data` is lost; an enrich row's counts follow its signals, its
 * duplicate's summary, or its status; kept input columns follow the table's own, renamed on a clash.
 */
import { describe, expect, it } from 'vitest';
import {
  enrichTables,
  invalidLinesAsRows,
  invalidRows,
  invalidTable,
  rowsTable,
} from '../../../contract/tables/rows.ts';
import { signalRow } from '../../../contract/tables/signals.ts';

const at = { record_id: 'r1', row: 1, domain: 'acme.com' };

describe('signals table rows', () => {
  it('moves the typed data fields to their columns and keeps every other field, or field of another type, in data', () => {
    const row = signalRow(
      {
        signal_id: 'sig_1',
        signal_type: 'sec-8k',
        detected_at: '2026-03-02T03:34:52+02:00',
        company: { name: 'Acme', domain: 'acme.com' },
        data: {
          summary: 'CFO leaves',
          relevance: 'high',
          filing_date: '2024-02-30',
          filing_year: 2024,
          highlights: ['a', 1],
          vendors_mentioned: ['SAP'],
          metrics: { timeframe: 'next_quarter', dollar_millions: 5, currency: 'USD' },
          note: null,
        },
      },
      at,
    );
    expect(row).toMatchObject({
      signal_id: 'sig_1',
      record_id: 'r1',
      row: 1,
      domain: 'acme.com',
      detected_at: Date.UTC(2026, 2, 2, 1, 34, 52),
      company_name: 'Acme',
      summary: 'CFO leaves',
      relevance: null,
      filing_date: null,
      filing_year: 2024,
      highlights: null,
      vendors_mentioned: ['SAP'],
      metrics_timeframe: 'next_quarter',
      metrics_dollar_millions: 5,
      metrics_dollar_context: null,
      data: {
        relevance: 'high',
        filing_date: '2024-02-30',
        highlights: ['a', 1],
        metrics: { currency: 'USD' },
        note: null,
      },
    });
  });

  it('drops a metrics object whose fields all have columns, keeps an empty one, and gives data {} when absent', () => {
    const taken = signalRow({ signal_id: 'a', signal_type: 'x', data: { metrics: { timeframe: 'q' } } }, at);
    expect([taken['metrics_timeframe'], taken['data']]).toEqual(['q', {}]);
    const empty = signalRow({ signal_id: 'b', signal_type: 'x', data: { metrics: {} } }, at);
    expect(empty['data']).toEqual({ metrics: {} });
    const none = signalRow({ signal_id: 'c', signal_type: 'x' }, at);
    expect([none['data'], none['summary'], none['detected_at']]).toEqual([{}, null, null]);
  });
});

describe('enrich rows table', () => {
  const def = rowsTable('enrich', ['Owner', 'status']);
  const signal = (id: string, type: string, detected_at: string) => ({
    signal_id: id,
    signal_type: type,
    detected_at,
    data: { summary: `${id} summary` },
  });

  it('counts signals per type, totals them, and names the newest', () => {
    const { rows, signals } = enrichTables(
      [
        {
          row: 1,
          record_id: 'r1',
          status: 'ok',
          domain: 'acme.com',
          company: { name: 'Acme', domain: 'acme.com', linkedin_url: 'https://www.linkedin.com/company/acme' },
          columns: { Owner: 'Kim', status: 'hot' },
          signals: [
            signal('s1', 'news', '2026-01-01T00:00:00Z'),
            signal('s2', 'news', '2026-03-01T00:00:00Z'),
            signal('s3', 'patents', '2026-02-01T00:00:00Z'),
          ],
        },
      ],
      def,
    );
    expect(rows[0]).toMatchObject({
      record_id: 'r1',
      company_linkedin_url: 'https://www.linkedin.com/company/acme',
      signal_count: 3,
      signals_news: 2,
      signals_sec_8k: 0,
      signals_other: 1,
      signal_counts: { news: 2, patents: 1 },
      latest_signal_at: Date.UTC(2026, 2, 1),
      latest_signal_type: 'news',
      latest_signal_summary: 's2 summary',
      Owner: 'Kim',
      input_status: 'hot',
      status: 'ok',
    });
    expect(signals.map((s) => [s['signal_id'], s['record_id'], s['row'], s['domain']])).toEqual([
      ['s1', 'r1', 1, 'acme.com'],
      ['s2', 'r1', 1, 'acme.com'],
      ['s3', 'r1', 1, 'acme.com'],
    ]);
  });

  it("takes a duplicate's counts from its answer's summary, 0 for not_found, none for an error", () => {
    const { rows } = enrichTables(
      [
        { row: 2, status: 'duplicate', duplicate_of: 1, answer_status: 'ok', signal_summary: { news: 2, other: 1 } },
        { row: 3, status: 'not_found' },
        { row: 4, status: 'error', error: { code: 'timeout', message: 'no answer' } },
      ],
      def,
    );
    expect(rows.map((r) => [r['signal_count'], r['signals_news'], r['signals_other'], r['duplicate_of']])).toEqual([
      [3, 2, 1, 1],
      [0, 0, 0, null],
      [null, null, null, null],
    ]);
    expect([rows[2]?.['error_code'], rows[2]?.['error_message'], rows[2]?.['signal_counts']]).toEqual([
      'timeout',
      'no answer',
      null,
    ]);
  });
});

describe('invalid table rows', () => {
  it('keeps the raw row and its reason, and gives it a row of the CRM file under the rows table names', () => {
    const lines = [{ row: 5, record_id: 'r5', raw: { Website: '' }, error: 'no domain', columns: { status: 'cold' } }];
    expect(invalidRows(lines, invalidTable(['status']))).toEqual([
      { record_id: 'r5', row: 5, raw: { Website: '' }, error: 'no domain', status: 'cold' },
    ]);
    expect(invalidLinesAsRows(lines, rowsTable('enrich', ['status']))[0]).toMatchObject({
      record_id: 'r5',
      row: 5,
      status: 'invalid',
      error_code: 'invalid_input',
      error_message: 'no domain',
      input_status: 'cold',
    });
  });
});
