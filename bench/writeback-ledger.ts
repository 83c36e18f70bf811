/**
 * writeback-ledger: the write-back ledger of a schedule that has confirmed n records, through two nights (built and
 * published, then read back, one change, published again), in the kit's form (a database on disk looked up by record
 * id, published gzipped with a small pointer: activities/writeback/ledger.ts) against the form of the release before
 * as the baseline (one JSON document held, proven, written and parsed whole). Each side in its own process: its peak
 * heap over its start, its max RSS, the bytes it stores, and a sample of records read back equal.
 *
 *   node bench/run.ts writeback-ledger [--size smoke]
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { mib, num, secs } from './lib/format.ts';

const mib1 = (kb: number) => `${num(kb / 1024, 1)} MiB`;

import type { Benchmark, BenchResult, RunOptions, Size } from './lib/types.ts';

export const SIZES = { full: { records: 1_000_000 }, smoke: { records: 10_000 } } as const;

const CHILD = fileURLToPath(new URL('./lib/ledger-child.ts', import.meta.url));

export interface LedgerRun {
  form: 'database' | 'json';
  records: number;
  peakHeapKb: number;
  maxRssKb: number;
  storedBytes: number;
  ms: number;
  equal: boolean;
}

async function side(form: LedgerRun['form'], records: number): Promise<LedgerRun> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--max-old-space-size=8192', CHILD, '--form', form, '--records', String(records)],
    { maxBuffer: 1024 * 1024 },
  );
  return {
    form,
    records,
    ...(JSON.parse(stdout.trim().split('\n').at(-1) as string) as Omit<LedgerRun, 'form' | 'records'>),
  };
}

export async function run(size: Size, options: RunOptions = {}): Promise<BenchResult> {
  const log = options.log ?? ((line: string) => console.error(line));
  const startedAt = new Date();
  const { records } = SIZES[size];
  log(`writeback-ledger: one JSON document (baseline), ${records} records`);
  const baseline = await side('json', records);
  log(`writeback-ledger: the database, ${records} records`);
  const kit = await side('database', records);
  const ratio = (a: number, b: number) => (b > 0 ? num(a / b, 2) : '–');
  const row = (r: LedgerRun) => [
    r.form === 'database' ? 'database + pointer (the kit)' : 'one JSON document (before)',
    r.records,
    mib1(r.peakHeapKb),
    mib(r.maxRssKb),
    mib(r.storedBytes / 1024),
    secs(r.ms),
  ];
  return {
    name: 'writeback-ledger',
    size,
    title: `A write-back ledger of ${records} confirmed records through two nights, as a database vs one JSON document`,
    startedAt: startedAt.toISOString(),
    durationS: (Date.now() - startedAt.getTime()) / 1000,
    table: {
      columns: ['form', 'records', 'peak heap', 'peak RSS', 'stored', 'time'],
      rows: [
        row(baseline),
        row(kit),
        [
          'database / JSON',
          '',
          ratio(kit.peakHeapKb, baseline.peakHeapKb),
          ratio(kit.maxRssKb, baseline.maxRssKb),
          ratio(kit.storedBytes, baseline.storedBytes),
          ratio(kit.ms, baseline.ms),
        ],
      ],
    },
    metrics: { runs: [baseline, kit] },
    checks: {
      'database: sampled records read back equal': kit.equal,
      'JSON: sampled records read back equal, sha256 holds': baseline.equal,
    },
    notes: [
      "Peak heap is sampled every 10 ms over the process start; peak RSS is getrusage maxRSS (the database side includes SQLite's page cache and the gzip of the file).",
      'The JSON side is what the release before did with a ledger: the whole object built in memory, JSON.stringify twice (its sha256, then its file), read and parsed whole.',
    ],
  };
}

export const benchmark: Benchmark = {
  name: 'writeback-ledger',
  description: 'the write-back ledger at n records: a database on disk vs one JSON document, peak heap and RSS',
  run,
};
