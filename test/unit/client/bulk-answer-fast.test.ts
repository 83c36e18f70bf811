/**
 * The bulk-enrich answer's fast path (connectors/signal-api/bulk-answer.ts) against the schema it stands in for:
 * on the sandbox's answers and on seeded variants of them (fields missing or null, odd date-times, numeric strings,
 * unknown fields, invalid values), `parseBulkEnrichAnswer` gives what `BulkEnrichSchema` gives, byte for byte
 * once serialized, and rejects what it rejects with the same issues.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fastBulkEnrichAnswer, parseBulkEnrichAnswer } from '../../../connectors/signal-api/bulk-answer.ts';
import { BulkEnrichSchema, CompanySchema } from '../../../connectors/signal-api/schemas.ts';
import { DEFAULT_KEYS, type Sandbox, startSandbox } from '../../../sandbox/index.ts';
import { Rng } from '../../../sandbox/random.ts';

type Json = Record<string, unknown>;

let sandbox: Sandbox;
/** Sandbox answers as sent (text), for fresh copies. */
const answers: string[] = [];

beforeAll(async () => {
  sandbox = await startSandbox({ rateLimitPerMinute: 0 });
  const requests = [
    { domains: Array.from({ length: 100 }, (_, i) => `fast-${i}.com`) },
    { domains: Array.from({ length: 60 }, (_, i) => `Fast-Limit-${i}.io`), limit: 2 },
    { domains: Array.from({ length: 60 }, (_, i) => `fast-types-${i}.net`), signal_types: ['news', 'hiring-trends'] },
  ];
  for (const body of requests) {
    const res = await fetch(`${sandbox.url}/v1/companies/enrich/bulk`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': DEFAULT_KEYS[0]! },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(200);
    answers.push(await res.text());
  }
});

afterAll(async () => {
  await sandbox.stop();
});

/** Both parses of `body`: the same success, the same output (also in key order), or the same issues. */
function expectSameAsSchema(body: unknown): 'fast' | 'schema' {
  const expected = BulkEnrichSchema.safeParse(body);
  const fast = fastBulkEnrichAnswer(body);
  const actual = parseBulkEnrichAnswer(body);
  expect(actual.success).toBe(expected.success);
  if (expected.success && actual.success) {
    expect(JSON.stringify(actual.data)).toBe(JSON.stringify(expected.data));
    expect(actual.data).toStrictEqual(expected.data);
  } else if (!expected.success && !actual.success) {
    expect(actual.error.issues).toEqual(expected.error.issues);
  }
  if (fast !== undefined) expect(expected.success).toBe(true);
  return fast === undefined ? 'schema' : 'fast';
}

describe('parseBulkEnrichAnswer: the fast path gives what the schema gives', () => {
  it('takes the fast path for every sandbox answer, with the same result', () => {
    for (const text of answers) {
      const body = JSON.parse(text) as { results: Json[] };
      expect(body.results.some((r) => r['status'] === 'ok')).toBe(true);
      expect(expectSameAsSchema(body)).toBe('fast');
    }
  });

  it('matches the schema on seeded variants: missing and null fields, odd dates, unknown and invalid values', () => {
    const taken = { fast: 0, schema: 0 };
    const failures = { fast: 0, schema: 0 };
    for (let seed = 1; seed <= 400; seed++) {
      const rng = new Rng(seed);
      const body = JSON.parse(rng.pick(answers)) as { results: Json[]; summary?: Json };
      // a few items keep each case small; the mutations then hit them densely
      body.results = rng.sample(body.results, rng.int(1, 6));
      if (rng.chance(0.3)) delete body.summary;
      const n = rng.int(1, 4);
      for (let i = 0; i < n; i++) rng.pick(MUTATIONS)(rng, body);
      const path = expectSameAsSchema(body);
      taken[path] += 1;
      if (!BulkEnrichSchema.safeParse(body).success) failures[path] += 1;
    }
    // Both paths ran, and the schema both accepted and rejected what the fast path left to it.
    expect(taken.fast).toBeGreaterThan(40);
    expect(taken.schema).toBeGreaterThan(40);
    expect(failures.schema).toBeGreaterThan(10);
    expect(failures.fast).toBe(0);
  });

  it('rejects a malformed answer with the issue naming the field', () => {
    const body = JSON.parse(answers[0]!) as { results: Json[] };
    const index = body.results.findIndex((r) => Array.isArray(r['signals']) && (r['signals'] as unknown[]).length > 1);
    const signal = (body.results[index]!['signals'] as Json[])[1]!;
    signal['detected_at'] = 'yesterday';
    const parsed = parseBulkEnrichAnswer(body);
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues.map((i) => i.path)).toEqual([['results', index, 'signals', 1, 'detected_at']]);
  });
});

// ─── the variants ──────────────────────────────────────────────────────────────────────────────────────────

type Mutation = (rng: Rng, body: { results: Json[]; summary?: Json }) => void;

const ODD_DATES: unknown[] = [
  '2026-03-01T12:00:00+00:00',
  '2026-03-01T12:00:00.123+00:00',
  '2026-03-01T12:00:00.5Z',
  '2026-03-01T12:00:00.123Z',
  '2026-03-01T12:00:00',
  '2026-03-01 12:00:00',
  '2026-03-01T12:00Z',
  '2026-03-01T14:00:00+02:00',
  '2026-02-29T12:00:00Z',
  '2024-02-29T12:00:00Z',
  '2026-03-31T23:59:59Z',
  '2026-03-01t12:00:00z',
  '  2026-03-01T12:00:00Z ',
  1772366400000,
  1772366400,
  0,
  'not a date',
  '',
  null,
  true,
  ['2026-03-01T12:00:00Z'],
];

const ODD_VALUES: unknown[] = [null, '', '  ', 'Text', '42', 42, 0, -1.5, true, [], ['a'], [1], {}, { a: 1 }];

function pickOk(rng: Rng, body: { results: Json[] }): Json | undefined {
  const ok = body.results.filter((r) => r['status'] === 'ok');
  return ok.length ? rng.pick(ok) : undefined;
}

function pickSignal(rng: Rng, body: { results: Json[] }): Json | undefined {
  const signals = pickOk(rng, body)?.['signals'];
  return Array.isArray(signals) && signals.length ? (rng.pick(signals) as Json) : undefined;
}

/** A company: the item's own, or one of a signal's. */
function pickCompany(rng: Rng, body: { results: Json[] }): Json | undefined {
  const target = rng.chance(0.5) ? pickOk(rng, body) : pickSignal(rng, body);
  const company = target?.['company'];
  return company && typeof company === 'object' ? (company as Json) : undefined;
}

function setOrDelete(rng: Rng, target: Json | undefined, keys: readonly string[], values: readonly unknown[]): void {
  if (!target) return;
  const key = rng.pick(keys);
  if (rng.chance(0.3)) delete target[key];
  else target[key] = rng.pick(values);
}

/** An own `__proto__` field, as JSON.parse makes one. */
function addProto(target: Json | undefined): void {
  if (target)
    Object.defineProperty(target, '__proto__', { value: 1, enumerable: true, writable: true, configurable: true });
}

const SIGNAL_KEYS = ['signal_id', 'signal_type', 'signal_subtype', 'signal_name', 'association', 'company', 'data'];
/** The company fields the answer schema reads (the fast path must agree with it on each). */
const COMPANY_KEYS = Object.keys(CompanySchema.in.shape);

const MUTATIONS: Mutation[] = [
  (rng, body) => {
    const s = pickSignal(rng, body);
    if (s) s['detected_at'] = rng.pick(ODD_DATES);
  },
  (rng, body) => setOrDelete(rng, pickSignal(rng, body), SIGNAL_KEYS, ODD_VALUES),
  (rng, body) => setOrDelete(rng, pickCompany(rng, body), COMPANY_KEYS, ODD_VALUES),
  (rng, body) => {
    const c = pickCompany(rng, body);
    if (c) c['linkedin_url'] = rng.pick(['/company/acme', 'linkedin.com/company/x', '//x.io/a', '', 'HTTP://X', null]);
  },
  (rng, body) => {
    const c = pickCompany(rng, body);
    if (c) c['revenue'] = rng.pick([1_000_000, '$1M', null, false]);
  },
  (rng, body) => {
    const s = pickSignal(rng, body);
    if (s) s['signal_id'] = rng.pick([12345, '2f1c7a9e-5b3d-4c8e-9a1f-0e2d3c4b5a69', '', null, 1.5]);
  },
  (rng, body) => {
    const s = pickSignal(rng, body);
    if (s) s['signal_name'] = rng.pick(['', '   ', null, 'Named']);
  },
  (rng, body) => {
    // data: summary missing, null, moved last, a number; data null, an array; integer-like keys
    const s = pickSignal(rng, body);
    const data = s?.['data'] as Json | undefined;
    if (!s || !data || typeof data !== 'object') return;
    const choice = rng.int(0, 6);
    if (choice === 0) delete data['summary'];
    else if (choice === 1) data['summary'] = null;
    else if (choice === 2) {
      const summary = data['summary'];
      delete data['summary'];
      data['summary'] = summary;
    } else if (choice === 3) data['summary'] = 7;
    else if (choice === 4) s['data'] = rng.pick([null, [], 'text']);
    else if (choice === 5) data['0'] = 'zero';
    else addProto(data);
  },
  (rng, body) => {
    const item = pickOk(rng, body);
    if (item) setOrDelete(rng, item, ['company', 'signals', 'signal_summary', 'coverage', 'status'], [null]);
  },
  (rng, body) => {
    const item = rng.pick(body.results);
    item['domain'] = rng.pick([' Mixed.Case.COM ', 'x.io', '', 42, null]);
  },
  (rng, body) => {
    const item = rng.pick(body.results);
    const choice = rng.int(0, 4);
    if (choice === 0) delete item['status'];
    else if (choice === 1) item['status'] = rng.pick(['', 'weird', 'error']);
    else if (choice === 2) item['error'] = rng.pick([{ code: 'x', message: 'y' }, 'boom', null, { code: 5 }]);
    else if (choice === 3) item['company'] = { name: 'Ghost', domain: 'ghost.io' };
    else item['signals'] = rng.pick([[], null, 'none']);
  },
  (rng, body) => {
    // numeric strings and non-numbers where numbers go
    const item = pickOk(rng, body);
    const summary = item?.['signal_summary'] as Json | undefined;
    if (summary && typeof summary === 'object') summary[rng.pick(['news', 'other'])] = rng.pick(['3', 3, 'x', null]);
    const c = pickCompany(rng, body);
    if (c) c['employee_count_low'] = rng.pick(['10', ' 10 ', 'ten', 10.5]);
  },
  (rng, body) => {
    const coverage = pickOk(rng, body)?.['coverage'] as Json | undefined;
    if (!coverage || typeof coverage !== 'object') return;
    const range = coverage['date_range'] as Json | undefined;
    if (range && typeof range === 'object' && rng.chance(0.7)) {
      setOrDelete(rng, range, ['earliest', 'latest'], ODD_DATES);
      if (rng.chance(0.3)) range['span_days'] = 3;
    } else setOrDelete(rng, coverage, ['total_before_filters', 'signal_types_available', 'date_range'], ODD_VALUES);
  },
  (rng, body) => {
    // unknown fields at every level, including names the output already holds
    const targets: (Json | undefined)[] = [
      body as Json,
      body.summary,
      rng.pick(body.results),
      pickSignal(rng, body),
      pickCompany(rng, body),
      pickOk(rng, body)?.['coverage'] as Json | undefined,
    ];
    const target = rng.pick(targets);
    if (!target || typeof target !== 'object') return;
    if (rng.chance(0.15)) addProto(target);
    else target[rng.pick(['extra', 'linkedin_url_absolute', 'row', 'tags', '1'])] = rng.pick(ODD_VALUES);
  },
  (rng, body) => {
    setOrDelete(rng, body.summary, ['requested', 'ok', 'not_found', 'error', 'signals'], [null, 5, '5', 'x']);
  },
  (rng, body) => {
    const item = pickOk(rng, body);
    const c = pickCompany(rng, body);
    if (item && c) item['company'] = c; // a signal's company as the item's, and the other way round
  },
];
