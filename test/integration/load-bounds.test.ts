/**
 * `signal-kit load` holds its memory to a bound a user can count on whatever a part holds: a gzip part that inflates
 * a thousandfold, a small ZSTD Parquet part holding one huge cell, and a big part its manifest calls 100 bytes are each
 * refused by name, nothing loaded, within a peak RSS of the loader's own process (reported by the child itself as it
 * exits) far below what the bomb would take. A value PostgreSQL cannot hold (NUL in text, `\u0000` in JSON) is loaded
 * as U+FFFD and counted in the load's report, from JSONL and from Parquet parts.
 */
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, open, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { pathToFileURL } from 'node:url';
import { createGzip } from 'node:zlib';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeTable } from '../../activities/tables/encode.ts';
import { MANIFEST_SCHEMA_VERSION, ManifestSchema } from '../../contract/manifest-schemas.ts';
import type { TableRow } from '../../contract/tables/columns.ts';
import { SIGNALS_TABLE } from '../../contract/tables/signals.ts';
import { type PostgresServer, startPostgres } from '../../devstack/index.ts';
import { cliMain, runProgram } from '../helpers/cli.ts';

const MiB = 1024 * 1024;
/**
 * The child reports its own peak resident memory (VmHWM, kilobytes) as it exits, whatever the exit. Not
 * `resourceUsage().maxRSS`: Linux carries that over from the parent through fork and exec.
 */
const REPORT_PEAK = `data:text/javascript,process.on('exit',()=>process.stderr.write('\\npeak-rss-kb '+/VmHWM:\\s*(\\d+)/.exec(process.getBuiltinModule('fs').readFileSync('/proc/self/status','utf8'))[1]+'\\n'))`;
/** The bound: a loader refusing a bomb stays under this peak (the gzip bomb took 2.2 GB before it was bounded, the Parquet one 1.6 GB). */
const PEAK_BOUND_MB = 400;
/**
 * V8 frees a garbage buffer's memory only at a collection, and how much garbage it lets pile up before one depends
 * on its young generation's size and on how much CPU the machine leaves it: a semi-space of 1 MB makes the peak what
 * the loader holds, which is what a bound on a part's memory is about.
 */
const HELD_ONLY = ['--max-semi-space-size=1'];
/** Making a bomb takes a while on a loaded machine (a 300 MB string, 1 GiB gzipped): no bound on time is meant. */
const MAKING_A_BOMB_MS = 240_000;

interface Planted {
  key: string;
  bytes: number;
  sha256: string;
  table: string;
  format: 'jsonl' | 'parquet';
  lines: number;
}

describe('signal-kit load: bounded memory and values PostgreSQL cannot hold', () => {
  let server: PostgresServer;
  let url: string;
  let db: pg.Client;
  let dir: string;

  beforeAll(async () => {
    [dir, server] = await Promise.all([mkdtemp(join(tmpdir(), 'load-bounds-')), startPostgres()]);
    url = await server.createDatabase('load_bounds');
    db = new pg.Client({ connectionString: url });
    await db.connect();
  });

  afterAll(() =>
    Promise.all([db?.end().then(() => server?.stop()), dir ? rm(dir, { recursive: true, force: true }) : undefined]),
  );

  /** A job's folder under its own output, its manifest listing `parts` (written there by `write`). */
  async function plantJob(jobId: string, parts: Planted[]): Promise<string> {
    const output = pathToFileURL(join(dir, jobId, 'out')).href;
    const manifest = ManifestSchema.parse({
      schema_version: MANIFEST_SCHEMA_VERSION,
      job_id: jobId,
      kind: 'enrich',
      input: pathToFileURL(join(dir, 'input.csv')).href,
      output,
      status: 'completed',
      started_at: '2026-01-01T00:00:00.000Z',
      finished_at: '2026-01-01T00:01:00.000Z',
      counts: { input_rows: 1, distinct: 1, duplicates: 0, ok: 1, not_found: 0, error: 0, invalid: 0, lines: 1 },
      credits_charged: 0,
      batches: { total: 1, done: 1, failed: 0 },
      parts,
    });
    const path = join(dir, jobId, 'out', jobId, '_manifest.json');
    await writeFile(path, JSON.stringify(manifest));
    return pathToFileURL(path).href;
  }

  async function partPath(jobId: string, key: string): Promise<string> {
    const path = join(dir, jobId, 'out', key);
    await mkdir(join(path, '..'), { recursive: true });
    return path;
  }

  /** A signals part as its manifest lists it, true to its bytes. */
  const signalsPart = (key: string, bytes: Buffer, lines: number): Planted => ({
    key,
    bytes: bytes.length,
    sha256: createHash('sha256').update(bytes).digest('hex'),
    table: 'signals',
    format: key.endsWith('.parquet') ? 'parquet' : 'jsonl',
    lines,
  });

  async function load(manifest: string, prefix: string, nodeFlags: string[] = []) {
    const result = await runProgram(
      process.execPath,
      [
        ...nodeFlags,
        '--import',
        REPORT_PEAK,
        cliMain,
        'load',
        '--manifest',
        manifest,
        '--into',
        url,
        '--table-prefix',
        prefix,
      ],
      { cwd: dir, env: process.env as Record<string, string>, timeout: 240_000, maxBuffer: 16 * MiB },
      'throw',
    );
    const peak = /peak-rss-kb (\d+)/.exec(result.stderr);
    expect(peak, result.stderr).not.toBeNull();
    return { ...result, peakMb: Number(peak?.[1]) / 1024 };
  }

  const tablesOf = async (prefix: string) =>
    (await db.query(`select table_name from information_schema.tables where table_name like '${prefix}%'`)).rows;

  /** The job with this one part is refused, saying `says`, within the memory bound, and no table is left. */
  async function expectRefusedWithinBound(jobId: string, part: Planted, says: string): Promise<void> {
    const prefix = `${jobId.replace('-', '_')}_`;
    const result = await load(await plantJob(jobId, [part]), prefix);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`part ${part.key}`);
    expect(result.stderr).toContain(says);
    expect(result.peakMb).toBeLessThan(PEAK_BOUND_MB);
    expect(await tablesOf(prefix)).toEqual([]);
  }

  it(
    'refuses a gzip part that inflates a thousandfold (1 MiB to 1 GiB), by name, within the memory bound',
    async () => {
      const jobId = 'gzip-bomb';
      const key = `${jobId}/tables/signals-00000.jsonl.gz`;
      const path = await partPath(jobId, key);
      // 1 GiB of lines a MiB long each, gzipped as a stream (never whole in this process). Each line is a row the
      // table takes (its own id, a type, a long summary): the load streams them into COPY until the bound refuses.
      const line = (i: number) => {
        const row = { signal_id: `bomb-${String(i).padStart(4, '0')}`, signal_type: 'news', summary: '' };
        const pad = MiB - JSON.stringify(row).length - 1;
        return Buffer.from(`${JSON.stringify({ ...row, summary: 'x'.repeat(pad) })}\n`);
      };
      expect(line(0).length).toBe(MiB);
      await pipeline(
        function* () {
          for (let i = 0; i < 1024; i++) yield line(i);
        },
        createGzip({ level: 9 }),
        createWriteStream(path),
      );
      const bytes = await readFile(path);
      expect(bytes.length).toBeLessThan(2 * MiB);
      await expectRefusedWithinBound(jobId, signalsPart(key, bytes, 1024), 'inflates past');
    },
    MAKING_A_BOMB_MS,
  );

  it(
    'refuses a small ZSTD Parquet part holding a ~300 MB cell, by name, within the memory bound',
    async () => {
      const jobId = 'parquet-bomb';
      const key = `${jobId}/tables/signals-00000.parquet`;
      const row: TableRow = {
        signal_id: 's1',
        signal_type: 'news',
        data: JSON.stringify({ x: 'y'.repeat(300_000_000) }),
      };
      const bytes = encodeTable('parquet', SIGNALS_TABLE, [row], undefined);
      expect(bytes.length).toBeLessThan(MiB);
      await writeFile(await partPath(jobId, key), bytes);
      await expectRefusedWithinBound(jobId, signalsPart(key, bytes, 1), 'inflates past');
    },
    MAKING_A_BOMB_MS,
  );

  /** A genuine signals JSONL part of about `size` bytes, written as the kit writes one, streamed (never whole here). */
  async function genuineSignalsPart(jobId: string, size: number): Promise<Planted> {
    const key = `${jobId}/tables/signals-00000.jsonl`;
    const hash = createHash('sha256');
    let bytes = 0;
    let lines = 0;
    const summary = 'a quarter of revenue from a new line of business; '.repeat(40);
    function* blocks() {
      while (bytes < size) {
        const rows: TableRow[] = Array.from({ length: 1000 }, (_, i) => ({
          signal_id: `${jobId}-${lines + i}`,
          domain: `company${(lines + i) % 997}.com`,
          signal_type: 'news',
          detected_at: Date.UTC(2026, 0, 1) + (lines + i) * 1000,
          summary,
          relevance: 0.5,
        }));
        const block = encodeTable('jsonl', SIGNALS_TABLE, rows, 'none');
        hash.update(block);
        bytes += block.length;
        lines += rows.length;
        yield block;
      }
    }
    await pipeline(blocks, createWriteStream(await partPath(jobId, key)));
    return { key, bytes, sha256: hash.digest('hex'), table: 'signals', format: 'jsonl', lines };
  }

  it(
    "loads a genuine 200 MB JSONL part streaming it: its peak exceeds a 2 MB part's by less than a third of its size",
    async () => {
      const small = await genuineSignalsPart('genuine-small', 2 * MiB);
      const big = await genuineSignalsPart('genuine-big', 200 * MiB);
      const baseline = await load(await plantJob('genuine-small', [small]), 'genuine_small_', HELD_ONLY);
      expect(baseline.code, baseline.stderr).toBe(0);
      const result = await load(await plantJob('genuine-big', [big]), 'genuine_big_', HELD_ONLY);
      expect(result.code, result.stderr).toBe(0);
      const loaded = await db.query('select count(*)::int as n from genuine_big_signals');
      expect(loaded.rows[0].n).toBe(big.lines);
      // Reading a file through twice with Node's streams alone leaves about 35 MB more at its peak, whatever its size
      // past a few MB (the buffers a collection has not freed yet); a part read whole took its size twice over.
      expect(result.peakMb - baseline.peakMb, `${baseline.peakMb} MB, then ${result.peakMb} MB`).toBeLessThan(
        big.bytes / MiB / 3,
      );
    },
    MAKING_A_BOMB_MS,
  );

  it('refuses a 1.5 GiB part its manifest calls 100 bytes before reading it, within the memory bound', async () => {
    const jobId = 'understated';
    const key = `${jobId}/tables/signals-00000.jsonl`;
    const path = await partPath(jobId, key);
    const file = await open(path, 'w');
    await file.truncate(1536 * MiB);
    await file.close();
    await expectRefusedWithinBound(
      jobId,
      { key, bytes: 100, sha256: '0'.repeat(64), table: 'signals', format: 'jsonl', lines: 1 },
      'does not match its manifest (its size differs',
    );
  });
});
