import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { encodePart } from '../../../activities/run/parts.ts';

/** What a part holds: one JSON text per record, each ending in a newline, in UTF-8. */
const jsonl = (records: unknown[]) => records.map((record) => `${JSON.stringify(record)}\n`).join('');

describe('encodePart', () => {
  const records = [
    { domain: 'acme.com', status: 'ok', name: 'Ächme GmbH — 東京 🚀', note: 'quote " backslash \\ tab \t' },
    { domain: 'lone.io', status: 'error', error: { code: 'x', message: 'half a pair: \ud83d' } },
    { domain: 'empty.io', status: 'not_found' },
  ];

  it('writes one UTF-8 JSON line per record, multi-byte characters and escapes included', () => {
    expect(encodePart('none', records).toString('utf8')).toBe(jsonl(records));
    expect(gunzipSync(encodePart('gzip', records)).toString('utf8')).toBe(jsonl(records));
  });

  it('writes nothing for no records', () => {
    expect(encodePart('none', []).length).toBe(0);
  });
});
