/**
 * `signal-kit load` reads a `file://` job's parts only as files of the job's own folder: a part that is a symbolic
 * link (or lies under a folder that is one) to a file outside is refused by the part's key, even with that file's
 * right size and sha256 in the manifest, before anything of it is loaded, and the message names neither the link's
 * target nor a byte of it. Otherwise the load is an oracle: it confirms a guessed size and hash of any file the
 * loader can read, and loads it. The same part as a plain file loads.
 */
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeTable } from '../../activities/tables/encode.ts';
import { MANIFEST_SCHEMA_VERSION, ManifestSchema } from '../../contract/manifest-schemas.ts';
import { SIGNALS_TABLE } from '../../contract/tables/signals.ts';
import { runCli } from '../helpers/cli.ts';

const SECRET_SIGNAL = 'sig_outside_secret';
const KEY = (jobId: string) => `${jobId}/tables/signals/part-00000.jsonl`;

describe('signal-kit load: a part that is a symbolic link', () => {
  let dir: string;
  let outside: string;
  let body: Buffer;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'load-symlink-'));
    // What the attacker wants confirmed and loaded: a file outside the job, which happens to be a valid part.
    body = encodeTable(
      'jsonl',
      SIGNALS_TABLE,
      [{ signal_id: SECRET_SIGNAL, signal_type: 'news', detected_at: Date.UTC(2026, 0, 1) }],
      'none',
    );
    await mkdir(join(dir, 'elsewhere'), { recursive: true });
    outside = join(dir, 'elsewhere', 'secret.jsonl');
    await writeFile(outside, body);
  });
  afterAll(() => (dir ? rm(dir, { recursive: true, force: true }) : undefined));

  /** A job's manifest under its output, listing the one part with the outside file's size and sha256. */
  async function plantJob(jobId: string): Promise<{ manifest: string; partPath: string; output: string }> {
    const output = join(dir, jobId, 'out');
    const manifest = ManifestSchema.parse({
      schema_version: MANIFEST_SCHEMA_VERSION,
      job_id: jobId,
      kind: 'enrich',
      input: pathToFileURL(join(dir, 'input.csv')).href,
      output: pathToFileURL(output).href,
      status: 'completed',
      started_at: '2026-01-01T00:00:00.000Z',
      finished_at: '2026-01-01T00:01:00.000Z',
      counts: { input_rows: 1, distinct: 1, duplicates: 0, ok: 1, not_found: 0, error: 0, invalid: 0, lines: 1 },
      credits_charged: 0,
      batches: { total: 1, done: 1, failed: 0 },
      parts: [
        {
          key: KEY(jobId),
          bytes: body.length,
          sha256: createHash('sha256').update(body).digest('hex'),
          table: 'signals',
          format: 'jsonl',
          lines: 1,
        },
      ],
    });
    await mkdir(join(output, jobId), { recursive: true });
    await writeFile(join(output, jobId, '_manifest.json'), JSON.stringify(manifest));
    return {
      manifest: pathToFileURL(join(output, jobId, '_manifest.json')).href,
      partPath: join(output, KEY(jobId)),
      output,
    };
  }

  async function load(manifest: string, file: string) {
    return runCli(
      ['load', '--manifest', manifest, '--into', `duckdb://${file}`],
      { cwd: dir, env: process.env as Record<string, string>, timeout: 60_000 },
      'throw',
    );
  }

  /** The signal ids the DuckDB file holds (none when the load made no table). */
  async function loadedSignals(file: string): Promise<string[]> {
    const instance = await DuckDBInstance.create(file);
    const duck = await instance.connect();
    try {
      const tables = await duck.runAndReadAll(`select table_name from information_schema.tables`);
      if (!tables.getRowObjectsJS().some((t) => t['table_name'] === 'signal_kit_signals')) return [];
      const rows = await duck.runAndReadAll('select signal_id from signal_kit_signals');
      return rows.getRowObjectsJS().map((r) => String(r['signal_id']));
    } finally {
      duck.closeSync();
      instance.closeSync();
    }
  }

  function expectRefused(result: { code: number; stderr: string }, key: string) {
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`part ${key}`);
    expect(result.stderr).toContain('symbolic link');
    expect(result.stderr).not.toContain(outside);
    expect(result.stderr).not.toContain('elsewhere');
    expect(result.stderr).not.toContain(SECRET_SIGNAL);
  }

  it('refuses a part that is a symbolic link to a file outside the job, its size and sha256 right', async () => {
    const job = await plantJob('linked-part');
    await mkdir(join(job.partPath, '..'), { recursive: true });
    await symlink(outside, job.partPath);
    const file = join(dir, 'linked-part.duckdb');
    expectRefused(await load(job.manifest, file), KEY('linked-part'));
    expect(await loadedSignals(file)).toEqual([]);
  });

  it('refuses a part under a folder of the job that is a symbolic link to a folder outside', async () => {
    const job = await plantJob('linked-folder');
    await mkdir(join(job.output, 'linked-folder', 'tables'), { recursive: true });
    const signalsDir = join(dir, 'elsewhere', 'signals');
    await mkdir(signalsDir, { recursive: true });
    await writeFile(join(signalsDir, 'part-00000.jsonl'), body);
    await symlink(signalsDir, join(job.output, 'linked-folder', 'tables', 'signals'));
    const file = join(dir, 'linked-folder.duckdb');
    expectRefused(await load(job.manifest, file), KEY('linked-folder'));
    expect(await loadedSignals(file)).toEqual([]);
  });

  it('loads the same part as a plain file of the job', async () => {
    const job = await plantJob('plain-part');
    await mkdir(join(job.partPath, '..'), { recursive: true });
    await writeFile(job.partPath, body);
    const file = join(dir, 'plain-part.duckdb');
    const result = await load(job.manifest, file);
    expect(result.code, result.stderr).toBe(0);
    expect(await loadedSignals(file)).toEqual([SECRET_SIGNAL]);
  });
});
