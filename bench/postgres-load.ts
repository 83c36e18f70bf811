/**
 * postgres-load: `signal-kit load` of a scheduled-push run's signals table (1,000,000 signals in 50 JSONL parts of
 * 20,000, gzip, as the part writer writes them) into a real PostgreSQL, against the baseline of a plain `COPY … (format
 * csv, header)` of the same signals' CSV parts (the job's `--format csv` twin) into a table of the same columns and
 * key. Both read their parts from the same folder, in one run, alternating; each into a fresh table. Also measured:
 * loading the same manifest again into the loaded table (the merge path: staging table, then INSERT … ON CONFLICT).
 */
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import type { TableRow } from '../activities/tables/columns.ts';
import { encodeTable } from '../activities/tables/encode.ts';
import { SIGNALS_TABLE, type SignalLike, signalRow } from '../activities/tables/signals.ts';
import { loadManifest } from '../cli/load/load.ts';
import { PG_TYPE } from '../cli/load/tables.ts';
import { createTableSql, type PgTable } from '../connectors/postgres/index.ts';
import { startPostgres } from '../devstack/index.ts';
import { logger } from './lib/env.ts';
import { num, secs } from './lib/format.ts';
import { machine } from './lib/machine.ts';
import { ownCpuSeconds, serverCpuSeconds } from './lib/proc.ts';
import { median } from './lib/stats.ts';
import type { Benchmark, BenchResult, RunOptions, Size } from './lib/types.ts';

export const SIZES = {
  full: { signals: 1_000_000, perPart: 20_000, rounds: 3 },
  smoke: { signals: 6_000, perPart: 2_000, rounds: 1 },
} as const;

const TYPES = ['news', 'hiring-trends', 'sec-8k', 'website-intelligence', 'linkedin-posts'] as const;

/** A signal shaped like the service's (spec 2.1, 2.2): common fields, typed data fields, and some without a column. */
function signal(i: number): SignalLike & { domain: string } {
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

/** The JSONL parts where the manifest's `output` and keys put them. */
const JSONL_DIR = 'out/bench/tables/signals';

interface Written {
  manifestUrl: string;
  csvFiles: string[];
  jsonlBytes: number;
  csvBytes: number;
}

/** The parts and manifest a push run of `count` signals would write (JSONL gzip) and the CSV twin of each part. */
async function writeRun(dir: string, count: number, perPart: number): Promise<Written> {
  const parts: Record<string, unknown>[] = [];
  const csvFiles: string[] = [];
  let jsonlBytes = 0;
  let csvBytes = 0;
  for (let start = 0, index = 0; start < count; start += perPart, index++) {
    const rows: TableRow[] = [];
    for (let i = start; i < Math.min(count, start + perPart); i++) {
      const s = signal(i);
      rows.push(signalRow(s, { record_id: null, row: null, domain: s.domain }));
    }
    const name = `part-${String(index).padStart(5, '0')}`;
    const jsonl = encodeTable('jsonl', SIGNALS_TABLE, rows, 'gzip');
    const csv = encodeTable('csv', SIGNALS_TABLE, rows, 'gzip');
    const key = `bench/tables/signals/${name}.jsonl.gz`;
    await writeFile(join(dir, JSONL_DIR, `${name}.jsonl.gz`), jsonl);
    await writeFile(join(dir, 'signals-csv', `${name}.csv`), csv);
    csvFiles.push(join(dir, 'signals-csv', `${name}.csv`));
    jsonlBytes += jsonl.length;
    csvBytes += csv.length;
    parts.push({
      key,
      lines: rows.length,
      bytes: jsonl.length,
      sha256: createHash('sha256').update(jsonl).digest('hex'),
      table: 'signals',
      format: 'jsonl',
    });
  }
  const manifest = {
    schema_version: 2,
    name: 'bench',
    run_id: '20260301T060000Z',
    output: pathToFileURL(join(dir, 'out')).href,
    status: 'completed',
    finished_at: '2026-03-01T06:10:00.000Z',
    parts,
  };
  await writeFile(join(dir, 'out', 'bench', '_manifest.json'), JSON.stringify(manifest));
  return {
    manifestUrl: pathToFileURL(join(dir, 'out', 'bench', '_manifest.json')).href,
    csvFiles,
    jsonlBytes,
    csvBytes,
  };
}

interface Round {
  ms: number;
  rows: number;
  /** CPU seconds of the benchmark process (A: reading, checking, parsing and encoding the parts) and of the server. */
  nodeCpuS: number;
  serverCpuS: number;
}

export async function run(size: Size, options: RunOptions = {}): Promise<BenchResult> {
  const log = logger('postgres-load', options.log);
  const { signals, perPart, rounds } = SIZES[size];
  const startedAt = new Date();
  const dir = await mkdtemp(join(tmpdir(), 'signal-kit-bench-pg-'));
  const server = await startPostgres();
  const db = new pg.Client({ connectionString: server.url });
  try {
    for (const sub of [JSONL_DIR, 'signals-csv']) await mkdir(join(dir, sub), { recursive: true });
    log(`writing ${signals} signals in parts of ${perPart}`);
    const written = await writeRun(dir, signals, perPart);
    await db.connect();

    // The baseline's table: the signals table's columns and key, nothing else.
    const plain: PgTable = {
      name: 'plain_signals',
      columns: SIGNALS_TABLE.columns.map((c) => ({
        name: c.name,
        type: PG_TYPE[c.type],
      })),
      key: ['signal_id'],
      newerBy: [],
    };
    const serverPid = server.process().pid;
    const measure = async <T>(work: () => Promise<T>): Promise<T & Omit<Round, 'rows'>> => {
      const node = ownCpuSeconds();
      const cpu = serverCpuSeconds(serverPid);
      const started = performance.now();
      const result = await work();
      return {
        ...result,
        ms: performance.now() - started,
        nodeCpuS: ownCpuSeconds() - node,
        serverCpuS: serverCpuSeconds(serverPid) - cpu,
      };
    };
    const copyPlain = async (): Promise<Round> => {
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
    const load = async (prefix: string, fresh: boolean): Promise<Round & { merged: boolean }> => {
      if (fresh) await db.query(`drop table if exists ${prefix}signals`);
      return measure(async () => {
        const report = await loadManifest({ manifestUrl: written.manifestUrl, into: server.url, prefix });
        const table = report.tables[0];
        return { rows: table?.rows ?? 0, merged: table?.merged ?? false };
      });
    };

    const baseline: Round[] = [];
    const kit: (Round & { merged: boolean })[] = [];
    for (let round = 1; round <= rounds; round++) {
      log(`round ${round}: B plain COPY of the CSV parts`);
      baseline.push(await copyPlain());
      log(`round ${round}: A signal-kit load of the manifest`);
      kit.push(await load('bench_', true));
    }
    log('A again: the same manifest into the loaded table (merge)');
    const reload = await load('bench_', false);
    const same = await db.query<{ plain: string; loaded: string; n: number }>(
      `select (select count(*) from plain_signals)::int as n,
              (select md5(string_agg(signal_id || detected_at::text || coalesce(summary, ''), ',' order by signal_id)) from plain_signals) as plain,
              (select md5(string_agg(signal_id || detected_at::text || coalesce(summary, ''), ',' order by signal_id)) from bench_signals) as loaded`,
    );
    const b = median(baseline.map((r) => r.ms));
    const a = median(kit.map((r) => r.ms));
    const rate = (ms: number) => signals / (ms / 1000);
    const ratio = b / a;
    const cpu = (rounds: Round[], key: 'nodeCpuS' | 'serverCpuS') => num(median(rounds.map((r) => r[key])), 1);
    const reloadRatio = b / reload.ms;
    return {
      name: 'postgres-load',
      size,
      title: `postgres-load: ${num(signals, 0)} signals (${signals / perPart} parts) into PostgreSQL ${server.url.replace(/^.*@/, '').replace(/\/.*$/, '')}: signal-kit load of a push run's manifest (JSONL gzip parts, ${num(written.jsonlBytes / 1e6, 0)} MB) vs a plain COPY of the same signals' CSV parts (${num(written.csvBytes / 1e6, 0)} MB); median of ${rounds} alternating round(s), each into a fresh table.`,
      startedAt: startedAt.toISOString(),
      durationS: (Date.now() - startedAt.getTime()) / 1000,
      table: {
        columns: ['run', 'signals/s', 'time', 'speed vs B', 'CPU s: load process', 'CPU s: server'],
        rows: [
          [
            'A signal-kit load (fresh table)',
            num(rate(a), 0),
            secs(a),
            `${num(ratio, 2)}×`,
            cpu(kit, 'nodeCpuS'),
            cpu(kit, 'serverCpuS'),
          ],
          [
            'B plain COPY of the CSV parts',
            num(rate(b), 0),
            secs(b),
            '1.00×',
            cpu(baseline, 'nodeCpuS'),
            cpu(baseline, 'serverCpuS'),
          ],
          [
            'A again: same manifest, loaded table (merge)',
            num(rate(reload.ms), 0),
            secs(reload.ms),
            `${num(reloadRatio, 2)}×`,
            cpu([reload], 'nodeCpuS'),
            cpu([reload], 'serverCpuS'),
          ],
        ],
      },
      metrics: { machine: machine(), signals, perPart, baseline, kit, reload, ratio, reloadRatio, ...written },
      checks: {
        'every round copied every signal': [...baseline, ...kit].every((r) => r.rows === signals),
        'a fresh load appends with COPY (no merge)': kit.every((r) => !r.merged),
        'the reload merged and read every signal': reload.merged && reload.rows === signals,
        'both tables hold the same signals':
          same.rows[0]?.n === signals && same.rows[0]?.plain === same.rows[0]?.loaded,
      },
      notes: [
        'A includes reading each part, checking its sha256, gunzip, JSON parsing and the two columns load adds (source_manifest, source_finished_at); B reads uncompressed CSV the server parses itself.',
        "The server is the dev stack's (fsync off); both sides run against it in the same run, so the ratio holds the machine's load alike.",
        `Per-round speed of A against B's round before it: ${kit.map((k, i) => `${num((baseline[i]?.ms ?? 0) / k.ms, 2)}×`).join(', ')}. A's load process decodes the parts (gunzip, JSON) while the server copies: with a core free for it, that overlaps; on a machine whose cores are all busy, its CPU adds to the server's.`,
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
  description: 'signal-kit load of 1,000,000 signals into PostgreSQL vs a plain COPY of the same signals as CSV',
  run,
};
