/**
 * The Parquet writer's text and JSON values, as DuckDB reads them back: ASCII and non-ASCII text (accents, emoji,
 * lone surrogates, which JSON allows), JSON values of every kind, nulls, and columns big enough to be compressed
 * next to small ones that are not.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { encodeTable } from '../../../activities/tables/encode.ts';
import { SIGNALS_TABLE, signalRow } from '../../../contract/tables/signals.ts';
import { openDuck, sqlString } from '../../helpers/tables.ts';

/** Lone surrogates at the end of one value and the start of the next: encoded apart, each is U+FFFD. */
const TEXTS = ['plain ascii', 'Zürich – Straße', 'emoji 🚀 launch', 'ends high \uD83D', '\uDE00 starts low', '', null];

async function readBack(rows: ReturnType<typeof signalRow>[]) {
  const dir = await mkdtemp(join(tmpdir(), 'signal-kit-parquet-values-'));
  const path = join(dir, 'signals.parquet');
  await writeFile(path, encodeTable('parquet', SIGNALS_TABLE, rows, undefined));
  const duck = await openDuck();
  try {
    return await duck.query(
      `SELECT signal_id, summary, signal_name, data::VARCHAR AS data, typeof(data) AS data_type
       FROM read_parquet(${sqlString(path)}) ORDER BY row`,
    );
  } finally {
    duck.close();
  }
}

describe('Parquet text and JSON values', () => {
  it('reads back every text and JSON value as written, ASCII or not, compressed or not', async () => {
    // 400 rows: the text columns are well past the size where they are compressed; `detail` holds one short value.
    const rows = Array.from({ length: 400 }, (_, i) =>
      signalRow(
        {
          signal_id: `sig_${i}`,
          signal_type: 'news',
          signal_name: TEXTS[i % TEXTS.length],
          data: {
            summary: TEXTS[(i + 3) % TEXTS.length],
            ...(i === 0 ? { detail: 'only one' } : {}),
            note: TEXTS[(i + 1) % TEXTS.length],
            nested: { list: [i, 'x', null, true], empty: {} },
          },
        },
        { record_id: null, row: i, domain: 'acme.com' },
      ),
    );
    const read = await readBack(rows);
    const utf8 = (text: string | null | undefined) =>
      text === null || text === undefined ? null : Buffer.from(text, 'utf8').toString('utf8');
    expect(read).toEqual(
      rows.map((row, i) => ({
        signal_id: `sig_${i}`,
        summary: utf8(TEXTS[(i + 3) % TEXTS.length]),
        signal_name: utf8(TEXTS[i % TEXTS.length]),
        // A lone surrogate in JSON is U+FFFD too (JSON.stringify would escape it, and DuckDB refuses that JSON).
        data: JSON.stringify(row['data']).replaceAll('\\ud83d', '\uFFFD').replaceAll('\\ude00', '\uFFFD'),
        data_type: 'JSON',
      })),
    );
    // The lone surrogates are written as U+FFFD each, never merged into one character across two values.
    const endsHigh = rows.filter((_, i) => i % TEXTS.length === TEXTS.indexOf('ends high \uD83D'));
    expect(read.filter((row) => row['signal_name'] === 'ends high \uFFFD')).toHaveLength(endsHigh.length);
  });
});
