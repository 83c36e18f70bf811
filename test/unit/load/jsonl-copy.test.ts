/**
 * The COPY text `load` makes straight from a flat JSONL part is byte for byte what parsing each line and encoding
 * every value gives, for values that test the escapes of both formats; a line of another shape is not guessed at.
 */
import { describe, expect, it } from 'vitest';
import { encodeTable } from '../../../activities/tables/encode.ts';
import { copyTextField, writableColumns } from '../../../connectors/postgres/index.ts';
import type { TableRow } from '../../../contract/tables/columns.ts';
import { SIGNALS_TABLE } from '../../../contract/tables/signals.ts';
import { jsonlToCopyText } from '../../../loader/jsonl-copy.ts';
import { signalsLoadTable } from '../../../loader/tables.ts';

const TRICKY = [
  'plain',
  'quote " and backslash \\ and slash /',
  'tab\there, newline\nhere, return\rhere',
  'control \u0001\u0008\u000c\u001f and DEL \u007f',
  'é ü 中文 😀 and a lone surrogate \ud800 end',
  '\\n is not a newline, \\\\ two backslashes, \\" an escaped quote',
  '',
  '-starts like a formula',
];

function rows(): TableRow[] {
  return TRICKY.map((text, i) => ({
    signal_id: `sig_${i}`,
    record_id: i % 2 ? `rec "${i}"` : null,
    row: i + 1,
    domain: 'acme.com',
    signal_type: 'news',
    signal_subtype: text,
    detected_at: Date.UTC(2026, 2, 1) + i,
    summary: text,
    relevance: i % 3 ? -1.5e-7 * i : null,
    filing_year: i,
    highlights: i % 2 ? [text, 'two'] : null,
    data: { text, nested: { list: [text, 1, null, true] }, n: -0.5 },
  }));
}

describe('flat JSONL part to COPY text', () => {
  const table = signalsLoadTable('t_', 'file:///m.json');
  const columns = writableColumns(table.pg);
  const suffixColumns = columns.slice(SIGNALS_TABLE.columns.length);
  const provenance: Record<string, string> = {
    source_manifest: 'file:///out/a\tb/_manifest.json',
    source_finished_at: '2026-03-01T06:00:00.000Z',
  };
  const suffix = Buffer.from(suffixColumns.map((c) => `\t${copyTextField(provenance[c.name], c.type)}`).join(''));
  const names = SIGNALS_TABLE.columns.map((c) => c.name);

  // Lines whose COPY text is longer than their JSON: backslashes in a list's items double in COPY's text.
  const backslashes = (): TableRow[] =>
    [1, 400, 5000].map((n, i) => ({
      ...(rows()[0] as TableRow),
      signal_id: `sig_b${i}`,
      highlights: ['\\'.repeat(n), `"${'\\"'.repeat(n)}`],
    }));

  it.each([
    ['escapes of every kind', rows],
    ['lines that grow: lists full of backslashes', backslashes],
  ])('is what parsing and encoding every value gives: %s', (_, make) => {
    const part = encodeTable('jsonl', SIGNALS_TABLE, make(), 'none');
    const expected = part
      .toString('utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => {
        const record = { ...(JSON.parse(line) as Record<string, unknown>), ...provenance };
        return `${columns.map((c) => copyTextField(record[c.name] ?? null, c.type)).join('\t')}\n`;
      })
      .join('');
    const fast = jsonlToCopyText(part, { names, suffix });
    // The bytes sent to the server (a lone surrogate is U+FFFD in UTF-8 either way).
    expect(fast?.toString('utf8')).toBe(Buffer.from(expected).toString('utf8'));
    expect(fast?.equals(Buffer.from(expected))).toBe(true);
  });

  it('gives up on a line of another shape (a missing, extra or reordered key, or a cut line)', () => {
    const part = encodeTable('jsonl', SIGNALS_TABLE, rows(), 'none').toString('utf8');
    const first = JSON.parse(part.split('\n')[0] as string) as Record<string, unknown>;
    const { record_id, ...missing } = first;
    const reordered = { record_id, ...missing };
    for (const line of [
      JSON.stringify(missing),
      JSON.stringify({ ...first, extra: 1 }),
      JSON.stringify(reordered),
      part.split('\n')[0]?.slice(0, 40),
    ]) {
      expect(jsonlToCopyText(Buffer.from(`${part}${line}\n`), { names, suffix })).toBeUndefined();
    }
  });

  it('loads NUL, which PostgreSQL cannot hold, as U+FFFD and counts it; a jsonb value holding one goes the parsing way', () => {
    const json = columns.slice(0, names.length).map((c) => c.type === 'jsonb');
    const base = rows()[0] as TableRow;
    const inText = encodeTable(
      'jsonl',
      SIGNALS_TABLE,
      [{ ...base, summary: 'a\u0000b', highlights: ['x\u0000y', 'not a NUL: \\u0000'], data: { t: 'ok' } }],
      'none',
    );
    const record = { ...(JSON.parse(inText.toString('utf8')) as Record<string, unknown>), ...provenance };
    const parsed = { nul: 0 };
    const expected = `${columns.map((c) => copyTextField(record[c.name] ?? null, c.type, parsed)).join('\t')}\n`;
    const count = { nul: 0 };
    const fast = jsonlToCopyText(inText, { names, json, suffix }, count);
    expect(fast?.toString('utf8')).toBe(expected);
    expect(expected).not.toContain('\u0000');
    expect(expected).toContain('a\uFFFDb');
    expect([count.nul, parsed.nul]).toEqual([2, 2]);
    const inJson = encodeTable('jsonl', SIGNALS_TABLE, [{ ...base, data: { t: 'a\u0000b' } }], 'none');
    expect(jsonlToCopyText(inJson, { names, json, suffix }, { nul: 0 })).toBeUndefined();
  });
});
