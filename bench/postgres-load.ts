/**
 * postgres-load: `signal-kit load` of a scheduled-push run's signals table (1,000,000 signals in 50 parts of 20,000,
 * as the part writer writes them) into a real PostgreSQL, against the baseline of a plain `COPY … (format csv,
 * header)` of the same signals' CSV parts (the `--format csv` twin) into a table of the same columns and key. Two
 * loads are measured: A from the run's gzip JSONL parts, P from its Parquet parts (a run with `--format parquet`).
 * Every round runs B, A and P once each, into fresh tables, in an order that rotates from round to round, after a
 * checkpoint; each round's ratios compare runs of that round, and the result is their median and spread, with the
 * machine's load average around every round. Also measured: the same JSONL manifest loaded again into the loaded
 * table (the merge path: staging table, then INSERT … ON CONFLICT).
 */
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { encodeTable } from '../activities/tables/encode.ts';
import { createTableSql, type PgTable } from '../connectors/postgres/index.ts';
import type { TableRow } from '../contract/tables/columns.ts';
import { SIGNALS_TABLE, type SignalLike, signalRow } from '../contract/tables/signals.ts';
import { startPostgres } from '../devstack/index.ts';
import { loadManifest } from '../loader/load.ts';
import { PG_TYPE } from '../loader/tables.ts';
import { logger } from './lib/env.ts';
import { num, secs } from './lib/format.ts';
import { machine } from './lib/machine.ts';
import { ownCpuSeconds, serverCpuSeconds } from './lib/proc.ts';
import { median, quantile } from './lib/stats.ts';
import type { Benchmark, BenchResult, RunOptions, Size } from './lib/types.ts';

export const SIZES = {
  full: { signals: 1_000_000, perPart: 20_000, rounds: 7 },
  smoke: { signals: 6_000, perPart: 2_000, rounds: 2 },
} as const;

const TYPES = ['news', 'hiring-trends', 'sec-8k', 'website-intelligence', 'linkedin-posts'] as const;

/** A signal shaped like the service's (spec 2.1, 2.2): common fields, typed data fields, and some without a column. */
export function signal(i: number): SignalLike & { domain: string } {
  const type = TYPES[i % TYPES.length] as string;
  const company = `company${Math.floor(i / 37)}`;
  const data: Record<string, unknown> = {
    summary: `${company} ${type === 'news' ? 'announced' : 'shows'} change number ${i}: a new office, a new product line, and a hiring push in sales`,
    source_url: `https://news.example.com/${company}/${i}`,
    confidence: i % 3 === 0 ? 'high' : 'medium',
  };
  if (type === 'sec-8k') {
    data['filing_date'] = `2026-0${1 + (i % 9)}-1${i % 10}`;
    data['highlights'] = ['revenue up', `segment ${i % 7}`];
    data['metrics'] = { dollar_millions: (i % 1000) / 10, timeframe: 'next_quarter', extra: i % 5 };
  }
  if (type === 'website-intelligence') {
    data['relevance'] = (i % 100) / 100;
    data['technologies'] = i % 2 ? ['react', 'stripe'] : [{ name: 'segment', category: 'analytics' }];
  }
  if (type === 'hiring-trends') data['trending_titles'] = ['Account Executive', 'SDR'];
  return {
    signal_id: `sig_${createHash('md5').update(String(i)).digest('hex')}`,
    signal_type: type,
    signal_subtype: i % 4 === 0 ? 'expansion' : 'general',
    signal_name: '',
    association: 'company',
    detected_at: new Date(Date.UTC(2026, 0, 1) + i * 7_919).toISOString(),
    company: { name: company, domain: `${company}.com` },
    data,
    domain: `${company}.com`,
  };
}

/** The parts where the manifests' `output` and keys put them, and the CSV twins B copies. */
/** A push run's folder, as the push writes it (a manifest is loaded only from the run's own folder). */
const RUN_FOLDER = (name: string) => `${name}/signals/dt=2026-03-01/run-20260301T060000Z`;
const FOLDERS = {
  jsonl: `out/${RUN_FOLDER('bench')}/tables/signals`,
  parquet: `out/${RUN_FOLDER('bench-parquet')}/tables/signals`,
  csv: 'signals-csv',
};

interface Written {
  /** The run's manifest listing its JSONL parts, and the same run's listing its Parquet parts. */
  manifests: { jsonl: string; parquet: string };
  csvFiles: string[];
  bytes: { jsonl: number; parquet: number; csv: number };
}

type PartEntry = Record<string, unknown>;

/** A part's manifest entry, as the part writer records it. */
const partEntry = (key: string, bytes: Buffer, lines: number, format: string): PartEntry => ({
  key,
  lines,
  bytes: bytes.length,
  sha256: createHash('sha256').update(bytes).digest('hex'),
  table: 'signals',
  format,
});

async function writeManifest(dir: string, name: string, parts: PartEntry[]): Promise<string> {
  const lines = parts.reduce((sum, part) => sum + Number(part['lines']), 0);
  // A push run's manifest as the output contract has it (schemas/push-manifest.schema.json): load checks it so.
  const manifest = {
    schema_version: 2,
    name,
    run_id: '20260301T060000Z',
    dt: '2026-03-01',
    scheduled_at: '2026-03-01T06:00:00.000Z',
    started_at: '2026-03-01T06:00:00.000Z',
    finished_at: '2026-03-01T06:10:00.000Z',
    status: 'completed',
    watchlist: pathToFileURL(join(dir, 'watchlist.csv')).href,
    output: pathToFileURL(join(dir, 'out')).href,
    mode: 'incremental',
    counts: {
      input_rows: 0,
      distinct: 0,
      duplicates: 0,
      invalid: 0,
      domains: 0,
      ok: 0,
      not_found: 0,
      error: 0,
      signals: lines,
      incomplete: 0,
    },
    credits_charged: 0,
    overlap: { signals: 0, credits: 0 },
    calls: { total: 0, first_round: 0, catch_up: 0 },
    batches: { total: 0, done: 0, failed: 0 },
    parts,
    incomplete_domains: [],
    errors: [],
    invalid_rows: [],
    watermarks: { key: `${name}/_watermarks.json`, from_run: null, domains_advanced: 0, committed: true },
  };
  const path = join(dir, 'out', RUN_FOLDER(name), '_manifest.json');
  await writeFile(path, JSON.stringify(manifest));
  return pathToFileURL(path).href;
}

/** The parts a push run of `count` signals would write in each format, and a manifest for the JSONL and the Parquet. */
export async function writeRun(dir: string, count: number, perPart: number): Promise<Written> {
  const parts: { jsonl: PartEntry[]; parquet: PartEntry[] } = { jsonl: [], parquet: [] };
  const csvFiles: string[] = [];
  const bytes = { jsonl: 0, parquet: 0, csv: 0 };
  for (const folder of Object.values(FOLDERS)) await mkdir(join(dir, folder), { recursive: true });
  for (let start = 0, index = 0; start < count; start += perPart, index++) {
    const rows: TableRow[] = [];
    for (let i = start; i < Math.min(count, start + perPart); i++) {
      const s = signal(i);
      rows.push(signalRow(s, { record_id: null, row: null, domain: s.domain }));
    }
    const name = `part-${String(index).padStart(5, '0')}`;
    const encoded = {
      jsonl: encodeTable('jsonl', SIGNALS_TABLE, rows, 'gzip'),
      parquet: encodeTable('parquet', SIGNALS_TABLE, rows, undefined),
      csv: encodeTable('csv', SIGNALS_TABLE, rows, undefined),
    };
    const files = { jsonl: `${name}.jsonl.gz`, parquet: `${name}.parquet`, csv: `${name}.csv` };
    for (const format of ['jsonl', 'parquet', 'csv'] as const) {
      await writeFile(join(dir, FOLDERS[format], files[format]), encoded[format]);
      bytes[format] += encoded[format].length;
    }
    csvFiles.push(join(dir, FOLDERS.csv, files.csv));
    for (const format of ['jsonl', 'parquet'] as const) {
      const key = `${FOLDERS[format].replace(/^out\//, '')}/${files[format]}`;
      parts[format].push(partEntry(key, encoded[format], rows.length, format));
    }
  }
  const manifests = {
    jsonl: await writeManifest(dir, 'bench', parts.jsonl),
    parquet: await writeManifest(dir, 'bench-parquet', parts.parquet),
  };
  return { manifests, csvFiles, bytes };
}

interface Run {
  ms: number;
  rows: number;
  /** CPU seconds of the benchmark process (A, P: reading, checking, decoding, encoding the parts) and of the server. */
  nodeCpuS: number;
  serverCpuS: number;
  /** Peak resident memory of the benchmark process during the run (sampled), MiB. */
  peakRssMiB: number;
  merged?: boolean;
}

const SIDES = ['B', 'A', 'P'] as const;
type Side = (typeof SIDES)[number];

interface Round {
  order: Side[];
  /** 1-minute load average before the round and after it. */
  load: [number, number];
  runs: Record<Side, Run>;
}

/** The order of round `r`: the three sides rotated, so each runs first, second and third equally often. */
const orderOf = (r: number): Side[] => SIDES.map((_, i) => SIDES[(i + r) % SIDES.length] as Side);

const load1 = () => Math.round((loadavg()[0] ?? 0) * 100) / 100;

/** Median and spread (min, quartiles, max) of a list. */
function spread(values: number[]) {
  return {
    median: median(values),
    min: Math.min(...values),
    q1: quantile(values, 0.25),
    q3: quantile(values, 0.75),
    max: Math.max(...values),
  };
}

export async function run(size: Size, options: RunOptions = {}): Promise<BenchResult> {
  const log = logger('postgres-load', options.log);
  const { signals, perPart, rounds } = SIZES[size];
  const startedAt = new Date();
  const dir = await mkdtemp(join(tmpdir(), 'signal-kit-bench-pg-'));
  const server = await startPostgres();
  const db = new pg.Client({ connectionString: server.url });
  try {
    log(`writing ${signals} signals in parts of ${perPart} (JSONL gzip, Parquet, CSV)`);
    const written = await writeRun(dir, signals, perPart);
    await db.connect();

    // The baseline's table: the signals table's columns and key, nothing else.
    const plain: PgTable = {
      name: 'plain_signals',
      columns: SIGNALS_TABLE.columns.map((c) => ({ name: c.name, type: PG_TYPE[c.type] })),
      key: ['signal_id'],
      newerBy: [],
    };
    const serverPid = server.process().pid;
    const measure = async (work: () => Promise<{ rows: number; merged?: boolean }>): Promise<Run> => {
      // The previous run's writes flushed first, so that no run pays for another's checkpoint.
      await db.query('checkpoint');
      let peak = process.memoryUsage().rss;
      const sampler = setInterval(() => {
        peak = Math.max(peak, process.memoryUsage().rss);
      }, 50);
      const node = ownCpuSeconds();
      const cpu = serverCpuSeconds(serverPid);
      const started = performance.now();
      try {
        const result = await work();
        return {
          ...result,
          ms: performance.now() - started,
          nodeCpuS: ownCpuSeconds() - node,
          serverCpuS: serverCpuSeconds(serverPid) - cpu,
          peakRssMiB: Math.round(Math.max(peak, process.memoryUsage().rss) / 2 ** 20),
        };
      } finally {
        clearInterval(sampler);
      }
    };
    const copyPlain = async (): Promise<Run> => {
      await db.query('drop table if exists plain_signals');
      await db.query(createTableSql(plain));
      return measure(async () => {
        await db.query('begin');
        let rows = 0;
        for (const file of written.csvFiles) {
          const copy = copyFrom('copy plain_signals from stdin (format csv, header true)');
          await pipeline(Readable.from([await readFile(file)]), db.query(copy));
          rows += copy.rowCount;
        }
        await db.query('commit');
        return { rows };
      });
    };
    const load = async (manifestUrl: string, prefix: string, fresh: boolean): Promise<Run> => {
      if (fresh) await db.query(`drop table if exists ${prefix}signals`);
      return measure(async () => {
        const report = await loadManifest({ manifestUrl, into: server.url, prefix });
        const table = report.tables[0];
        return { rows: table?.rows ?? 0, merged: table?.merged ?? false };
      });
    };
    const sides: Record<Side, () => Promise<Run>> = {
      B: copyPlain,
      A: () => load(written.manifests.jsonl, 'bench_', true),
      P: () => load(written.manifests.parquet, 'bench_pq_', true),
    };

    const loadAtStart = load1();
    const all: Round[] = [];
    for (let r = 0; r < rounds; r++) {
      const order = orderOf(r);
      const before = load1();
      const runs = {} as Record<Side, Run>;
      for (const side of order) {
        log(`round ${r + 1}/${rounds}: ${side} (load average ${load1()})`);
        runs[side] = await sides[side]();
      }
      all.push({ order, load: [before, load1()], runs });
    }
    log('A again: the same manifest into the loaded table (merge)');
    const reload = await load(written.manifests.jsonl, 'bench_', false);
    // Each table's rows as one order-independent sum of row hashes, the columns load adds left out; and the same
    // without signal_name, which is '' in these signals: CSV, B's source, cannot tell an empty text from null.
    const digest = async (table: string) =>
      (
        await db.query<{ n: number; all: string; csv: string }>(
          `select count(*)::int as n,
             sum(hashtext((to_jsonb(t) - 'source_manifest' - 'source_finished_at')::text)::bigint)::text as all,
             sum(hashtext((to_jsonb(t) - 'source_manifest' - 'source_finished_at' - 'signal_name')::text)::bigint)::text as csv
           from ${table} t`,
        )
      ).rows[0];
    const digests = {
      plain: await digest('plain_signals'),
      jsonl: await digest('bench_signals'),
      parquet: await digest('bench_pq_signals'),
    };

    const runsOf = (side: Side) => all.map((round) => round.runs[side]);
    const ratios = {
      A: spread(all.map((round) => round.runs.B.ms / round.runs.A.ms)),
      P: spread(all.map((round) => round.runs.B.ms / round.runs.P.ms)),
    };
    const loads = spread(all.flatMap((round) => round.load));
    // CPU seconds of both processes per run: with every core busy, no work overlaps and the speed ratio tends to B's
    // total over the load's, whatever the rounds' timing says.
    const totalCpu = (side: Side) => median(runsOf(side).map((r) => r.nodeCpuS + r.serverCpuS));
    const cpuRatio = { A: totalCpu('B') / totalCpu('A'), P: totalCpu('B') / totalCpu('P') };
    const ms = (side: Side) => median(runsOf(side).map((r) => r.ms));
    const rate = (value: number) => num(signals / (value / 1000), 0);
    const cpu = (runs: Run[], key: 'nodeCpuS' | 'serverCpuS') => num(median(runs.map((r) => r[key])), 1);
    const rss = (runs: Run[]) => `${median(runs.map((r) => r.peakRssMiB))} MiB`;
    const range = (x: ReturnType<typeof spread>) =>
      `${num(x.median, 2)}× (${num(x.min, 2)}–${num(x.max, 2)}; middle half ${num(x.q1, 2)}–${num(x.q3, 2)})`;
    const row = (label: string, runs: Run[], time: number, vsB: string) => [
      label,
      rate(time),
      secs(time),
      vsB,
      cpu(runs, 'nodeCpuS'),
      cpu(runs, 'serverCpuS'),
      rss(runs),
    ];
    const host = server.url.replace(/^.*@/, '').replace(/\/.*$/, '');
    return {
      name: 'postgres-load',
      size,
      title: `postgres-load: ${num(signals, 0)} signals (${signals / perPart} parts) into PostgreSQL ${host}: signal-kit load of a push run's manifest, from its JSONL gzip parts (A, ${num(written.bytes.jsonl / 1e6, 0)} MB) and from its Parquet parts (P, ${num(written.bytes.parquet / 1e6, 0)} MB), vs a plain COPY of the same signals' CSV parts (B, ${num(written.bytes.csv / 1e6, 0)} MB); ${rounds} rounds, each running B, A and P into fresh tables in a rotating order; speed vs B is the median of the rounds' ratios (range; middle half); load average ${num(loads.min, 1)}–${num(loads.max, 1)} (median ${num(loads.median, 1)}) on a ${machine().cores}-core machine.`,
      startedAt: startedAt.toISOString(),
      durationS: (Date.now() - startedAt.getTime()) / 1000,
      table: {
        columns: [
          'run',
          'signals/s',
          'time (median)',
          'speed vs B',
          'CPU s: load process',
          'CPU s: server',
          'peak RSS',
        ],
        rows: [
          row('A signal-kit load, JSONL parts (fresh table)', runsOf('A'), ms('A'), range(ratios.A)),
          row('P signal-kit load, Parquet parts (fresh table)', runsOf('P'), ms('P'), range(ratios.P)),
          row('B plain COPY of the CSV parts', runsOf('B'), ms('B'), '1.00×'),
          row('A again: same manifest, loaded table (merge)', [reload], reload.ms, `${num(ms('B') / reload.ms, 2)}×`),
        ],
      },
      metrics: {
        machine: machine(),
        signals,
        perPart,
        loadAtStart,
        loads,
        ratios,
        cpuRatio,
        rounds: all,
        baseline: runsOf('B'),
        kit: runsOf('A'),
        parquet: runsOf('P'),
        reload,
        digests,
        ...written,
      },
      checks: {
        'every run copied every signal': all.every((round) => SIDES.every((side) => round.runs[side].rows === signals)),
        'a fresh load appends with COPY (no merge)': [...runsOf('A'), ...runsOf('P')].every((r) => !r.merged),
        'the reload merged and read every signal': reload.merged === true && reload.rows === signals,
        'the JSONL and the Parquet load hold the same rows, value for value':
          digests.jsonl?.n === signals && digests.jsonl.all === digests.parquet?.all,
        "B's table holds the same rows (but for signal_name, '' in CSV is null)":
          digests.plain?.n === signals && digests.plain.csv === digests.jsonl?.csv,
      },
      notes: [
        'A and P include reading each part, checking its sha256 and decoding it (A: gunzip, then the JSONL turned into COPY text byte by byte; P: hyparquet, one row group at a time, then COPY text), plus the two columns load adds (source_manifest, source_finished_at); B reads uncompressed CSV the server parses itself.',
        "The server is the dev stack's (fsync off). Every run starts after a checkpoint; its own time holds the machine's load as it was then, which is why each ratio compares runs of one round and the result is the median.",
        `Per round (order; load average before → after; A vs B, P vs B): ${all.map((round) => `${round.order.join('')} ${round.load[0]}→${round.load[1]} ${num(round.runs.B.ms / round.runs.A.ms, 2)}× ${num(round.runs.B.ms / round.runs.P.ms, 2)}×`).join('; ')}.`,
        `CPU of both processes (median per run): B ${num(totalCpu('B'), 1)} s, A ${num(totalCpu('A'), 1)} s, P ${num(totalCpu('P'), 1)} s; B's over A's ${num(cpuRatio.A, 2)}, over P's ${num(cpuRatio.P, 2)}. With a core free for the load process, its decoding overlaps the server's COPY and the speed ratio is above these; with every core busy it falls towards them.`,
        'The merge path (a reload, or any load whose keys are already there) copies into a temporary staging table and then runs INSERT … ON CONFLICT DO UPDATE: it reads the data twice and sorts by key.',
      ],
    };
  } finally {
    await db.end().catch(() => {});
    await server.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

export const benchmark: Benchmark = {
  name: 'postgres-load',
  description:
    'signal-kit load of 1,000,000 signals into PostgreSQL, from JSONL and from Parquet parts, vs a plain COPY of the same signals as CSV',
  run,
};
