/**
 * The job commands as a user runs them: `signal-kit enrich|verify-emails|intent-export --wait`, `status` and `demo`
 * in child processes (`node cli/main.ts`), against a real Temporal dev server, the sandbox and a worker.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { gunzipSync } from 'node:zlib';
import { parse as parseCsv } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobResult, Manifest } from '../../activities/jobs/types.ts';
import { type JobEnv, startJobEnv } from '../../testkit/job-env.ts';
import { type CliResult, cliMain, repoRoot, runCli } from '../helpers/cli.ts';
import { readJobOutput } from '../helpers/output.ts';

const execFileAsync = promisify(execFile);

let env: JobEnv;
let dir: string;

function cli(args: string[], extra: Record<string, string> = {}, timeout = 60_000): Promise<CliResult> {
  const options = { cwd: dir, env: { ...env.childEnv(), ...extra }, timeout, maxBuffer: 32 * 1024 * 1024 };
  return runCli(args, options, 'minus-one');
}

/** Runs a job command writing under out/ as `jobId` and waits for the job to end. */
function cliJob(jobId: string, args: string[]): Promise<CliResult> {
  return cli([...args, '--output', 'out', '--job-id', jobId, '--wait']);
}

describe('signal-kit job commands', () => {
  beforeAll(async () => {
    env = await startJobEnv({ sandbox: { seed: 11 } });
    await env.startWorker();
    dir = await mkdtemp(join(tmpdir(), 'signal-kit-cli-'));
    const rows = ['website'];
    for (let i = 0; i < 250; i++) rows.push(i % 50 === 0 ? 'junk value' : `https://www.shop${i % 200}.com/`);
    await writeFile(join(dir, 'crm.csv'), `${rows.join('\n')}\n`);
    await writeFile(
      join(dir, 'emails.jsonl'),
      ['{"email":"a@x.com"}', '{"email":"B@X.COM"}', 'not json', ''].join('\n'),
    );
  });
  afterAll(async () => {
    await env?.stop();
  });

  it('enrich --wait logs JSON progress without a terminal, prints the result and exits 0', async () => {
    const result = await cliJob('cli-enrich', ['enrich', '--input', 'crm.csv', '--limit', '2']);
    expect(result.code, result.stderr).toBe(0);
    const job = JSON.parse(result.stdout) as JobResult;
    expect(job).toMatchObject({ jobId: 'cli-enrich', kind: 'enrich', status: 'completed' });
    expect(job.counts).toMatchObject({ input_rows: 250, distinct: 196, invalid: 5 });
    const progress = result.stderr
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { event: string; batchesTotal: number });
    expect(progress.length).toBeGreaterThan(0);
    expect(progress.every((p) => p.event === 'progress')).toBe(true);
    const manifest = JSON.parse(await readFile(join(dir, 'out', 'cli-enrich', '_manifest.json'), 'utf8')) as Manifest;
    expect(manifest.status).toBe('completed');

    const status = await cli(['status', 'cli-enrich']);
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ jobId: 'cli-enrich', status: 'COMPLETED' });
  });

  it('verify-emails reads JSONL: a non-JSON line becomes an invalid record naming its line', async () => {
    const result = await cliJob('cli-verify', ['verify-emails', '--input', 'emails.jsonl']);
    expect(result.code, result.stderr).toBe(0);
    const job = JSON.parse(result.stdout) as JobResult;
    expect(job.counts).toMatchObject({ input_rows: 3, distinct: 2, invalid: 1 });
    const { lines } = await readJobOutput(pathToFileURL(join(dir, 'out')).href, 'cli-verify');
    const invalid = lines.filter((line) => line['status'] === 'invalid');
    expect(invalid).toEqual([expect.objectContaining({ row: 3, raw: 'not json' })]);
  });

  it('intent-export --wait writes the download and exits 0', async () => {
    const result = await cliJob('cli-intent', ['intent-export', '--topics', 'b2b_5']);
    expect(result.code, result.stderr).toBe(0);
    const job = JSON.parse(result.stdout) as JobResult;
    expect(job.status).toBe('completed');
    expect(job.counts.lines).toBeGreaterThan(0);
  });

  it('a budget below the job cost exits 3 (budget exhausted)', async () => {
    const result = await cliJob('cli-budget', ['enrich', '--input', 'crm.csv', '--limit', '2', '--max-credits', '450']);
    expect(result.code, result.stderr).toBe(3);
    const job = JSON.parse(result.stdout) as JobResult;
    expect(job).toMatchObject({ status: 'budget_exhausted' });
    // The budget bought work, and the message says what was spent and what to run next.
    expect(job.counts.ok + job.counts.not_found).toBeGreaterThan(0);
    expect(result.stderr).toContain(`credit budget reached: ${job.credits} of 450 credits charged`);
    expect(result.stderr).toMatch(/run the same command with a higher --max-credits to continue/);
  });

  it('a budget that cannot pay for one domain at its worst is refused before anything runs, naming --limit', async () => {
    const marks = env.sandbox.ledger.entries.length;
    const result = await cli(['enrich', '--input', 'crm.csv', '--output', 'out', '--max-credits', '600', '--wait']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--max-credits 600 cannot pay for one domain at its worst.*Add --limit 300 or lower/);
    expect(env.sandbox.ledger.entries.length).toBe(marks);
  });

  it('bad flags and settings are refused with exit 2 and a message naming them', async () => {
    const limit = await cli(['enrich', '--input', 'crm.csv', '--output', 'out', '--limit', '900']);
    expect(limit.code).toBe(2);
    expect(limit.stderr).toMatch(/--limit must be at most 500/);
    const topics = await cli(['intent-export', '--topics', 'b2b_1,topic-2', '--output', 'out']);
    expect(topics.code).toBe(2);
    expect(topics.stderr).toMatch(/"topic-2" is not a topic id/);
    const worker = await cli(['worker'], { SIGNAL_API_URL: 'not a url' });
    expect(worker.code).toBe(2);
    expect(worker.stderr).toMatch(/SIGNAL_API_URL/);
    const missing = await cli(['enrich', '--output', 'out']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/--input is required/);
  });

  it('an input that does not exist is refused with exit 2 before anything starts, naming the input', async () => {
    const result = await cliJob('cli-missing', ['enrich', '--input', 'nope.csv']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/nope\.csv does not exist/);
  });
});

describe('signal-kit demo', () => {
  it('runs the main job end to end on its own stack and exits 0 with a summary', { timeout: 180_000 }, async () => {
    const out = await mkdtemp(join(tmpdir(), 'signal-kit-demo-'));
    const { stdout, stderr } = await execFileAsync(process.execPath, [cliMain, 'demo', '--output', out], {
      cwd: repoRoot,
      timeout: 170_000,
      maxBuffer: 32 * 1024 * 1024,
    });
    expect(stdout).toMatch(/enrich\s+completed/);
    expect(stdout).toMatch(/verify-emails\s+completed/);
    expect(stdout).toMatch(/intent-export\s+completed/);
    const [, reported, ledger] =
      /credits reported by the jobs: (\d+); charged by the sandbox ledger: (\d+)/.exec(stdout) ?? [];
    expect(Number(reported)).toBeGreaterThan(0);
    expect(reported).toBe(ledger);
    // No untruths and no noise: an export reads no input rows, counts are in words that agree with them, and no
    // log line at warning level reaches the terminal of a run that went well.
    const exportBlock = stdout.slice(stdout.indexOf('intent-export'));
    expect(exportBlock.split('\n').slice(0, 3).join('\n')).not.toMatch(/rows in|distinct/);
    expect(stdout).not.toMatch(/\b1 parts\b/);
    expect(stderr.split('\n').filter((line) => /"level":"(warn|error)"|No workflows registered/.test(line))).toEqual(
      [],
    );
    // The command it prints for reading a part works: the file is there and holds JSON lines.
    const [, part] = /read a part .*: gunzip -c (\S+) \| head -n 3/.exec(stdout) ?? [];
    expect(part).toBeDefined();
    const first = gunzipSync(await readFile(part!))
      .toString('utf8')
      .split('\n')[0]!;
    expect(JSON.parse(first)).toHaveProperty('status');
    await checkWriteBack(stdout);
  });
});

/** The fields a night writes unless told otherwise (docs/crm-write-back.md), as HubSpot names them. */
const FIELDS = [
  'signal_status',
  'signal_count',
  'signal_latest_signal_at',
  'signal_latest_signal_type',
  'signal_latest_signal_summary',
];

/** A HubSpot date-time (`…:35.000Z`) and the rows table's (`…:35Z`) name the same instant. */
const sameValue = (v: string) => (/^\d{4}-\d{2}-\d{2}T/.test(v) ? new Date(v).toISOString() : v);

/**
 * The demo's night on its local HubSpot: a first night, so every one of the export's 40 companies is a change, and a
 * CRM with the kit's fields refuses none: 40 written, the rest 0; every record `written` in writeback.csv; and each
 * value it shows read back from HubSpot after the night is the record's cell in the night's rows.csv.
 */
async function checkWriteBack(stdout: string): Promise<void> {
  const block = stdout.slice(stdout.indexOf('write-back     '));
  expect(block).toMatch(/a night of 40 HubSpot companies, written back to the local HubSpot/);
  expect(block).toMatch(/records written 40, rejected 0, not attempted 0, pending 0/);
  expect(block).toContain(`fields: ${FIELDS.join(', ')}`);
  const [, changes, report] = /changes (\S+), report (\S+)/.exec(block) ?? [];
  const changed = parseCsv(await readFile(changes!, 'utf8'), { bom: true }) as string[][];
  expect(changed.length - 1).toBe(40);
  const outcomes = parseCsv(await readFile(report!, 'utf8'), { bom: true, from_line: 2 }) as string[][];
  expect(outcomes.map((r) => r[1])).toEqual(Array(40).fill('written'));

  const [header = [], ...rows] = parseCsv(await readFile(changes!.replace(/changes\.csv$/, 'rows.csv'), 'utf8'), {
    bom: true,
  }) as string[][];
  const field = header.map((h) => h.toLowerCase().replaceAll(' ', '_'));
  const truth = new Map(rows.map((r) => [r[0], Object.fromEntries(field.map((f, i) => [f, r[i] ?? '']))]));
  const shown = new Map<string, Map<string, string>>();
  let record: string | undefined;
  for (const line of block.split('\n')) {
    const named = /^ {4}record (\d+) /.exec(line);
    if (named) {
      record = named[1]!;
      shown.set(record, new Map());
    }
    const value = /^ {6}(\w+): (.*) → (.*)$/.exec(line);
    if (!value || record === undefined) continue;
    const [, name, before, after] = value;
    expect(before, `${record} ${name} before the first night`).toBe('(empty)');
    shown.get(record)!.set(name!, after!);
  }
  expect(shown.size).toBe(3);
  // Before the first night every field is empty: after it, each field is what rows.csv says (shown when not empty).
  for (const [id, values] of shown) {
    for (const name of FIELDS) {
      const expected = truth.get(id)?.[name] ?? '';
      expect(sameValue(values.get(name) ?? ''), `${id} ${name}`).toBe(sameValue(expected));
    }
  }
}
