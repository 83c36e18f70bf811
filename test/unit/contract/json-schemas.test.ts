/**
 * The JSON Schemas shipped in schemas/ are the ones the zod schemas generate now (run `npm run schemas` after changing
 * contract/manifest-schemas.ts), they compile under a JSON Schema 2020-12 validator, and they tell a line the
 * kit writes from one it never would.
 */
import { describe, expect, it } from 'vitest';
import { OUTPUT_SCHEMAS, outputJsonSchemas } from '../../../contract/manifest-schemas.ts';
import { jsonSchemaValidator, shippedSchema as shipped } from '../../helpers/json-schema.ts';

describe('output JSON Schemas', () => {
  it('are current with the zod schemas they are generated from', async () => {
    for (const [file, schema] of Object.entries(outputJsonSchemas())) {
      expect(await shipped(file), `schemas/${file} is stale: run npm run schemas`).toEqual(schema);
    }
  });

  it('accept what the kit writes and refuse what it never writes', async () => {
    const ajv = jsonSchemaValidator();
    const enrich = ajv.compile(await shipped('enrich-line.schema.json'));
    expect(Object.keys(OUTPUT_SCHEMAS)).toContain('enrich-line.schema.json');
    const ok = {
      domain: 'acme.com',
      status: 'ok',
      row: 2,
      record_id: '0015g00000AbCdE',
      columns: { Owner: 'Ann' },
      matched_by: 'domain',
      input: 'https://www.acme.com/',
      company: { name: 'Acme', domain: 'acme.com' },
      signals: [{ signal_id: 'sig_1', signal_type: 'news', detected_at: '2026-03-01T12:00:00.000Z', data: {} }],
    };
    expect(enrich(ok), JSON.stringify(enrich.errors)).toBe(true);
    expect(enrich({ status: 'invalid', row: 3, record_id: null, raw: 'junk', error: 'not a host name' })).toBe(true);
    const { signals: _signals, ...answered } = ok;
    const duplicate = { ...answered, status: 'duplicate', row: 4, duplicate_of: 2, answer_status: 'ok' };
    expect(enrich(duplicate), JSON.stringify(enrich.errors)).toBe(true);
    expect(enrich({ ...duplicate, duplicate_of: undefined }), 'a duplicate names the line it shares').toBe(false);
    expect(enrich({ ...ok, record_id: undefined }), 'v2: every line carries record_id (null without one)').toBe(false);
    expect(enrich({ ...ok, matched_by: 'email' })).toBe(false);
    const byName = { ...answered, status: 'not_found', matched_by: 'company_name', input: 'Acme', domain: null };
    expect(enrich(byName), JSON.stringify(enrich.errors)).toBe(true);
    expect(enrich({ ...ok, status: 'maybe' })).toBe(false);
    expect(enrich({ ...ok, row: 0 })).toBe(false);
    const offset = { ...ok, signals: [{ ...ok.signals[0], detected_at: '2026-03-01T12:00:00+00:00' }] };
    expect(enrich(offset), 'timestamps are written in UTC with Z').toBe(false);
  });

  it('tell a scheduled-push line without its watchlist domain, or a push manifest without its version', async () => {
    const ajv = jsonSchemaValidator();
    const line = ajv.compile(await shipped('push-signal-line.schema.json'));
    const signal = { signal_id: 'sig_1', signal_type: 'news', detected_at: '2026-03-01T12:00:00.000Z', data: {} };
    expect(line({ domain: 'acme.com', ...signal }), JSON.stringify(line.errors)).toBe(true);
    expect(line(signal)).toBe(false);
    const manifest = ajv.compile(await shipped('push-manifest.schema.json'));
    expect(manifest({ name: 'nightly', run_id: '20260301T060000Z', dt: '2026-03-01' })).toBe(false);
    expect(JSON.stringify(manifest.errors)).toContain('schema_version');
  });
});
