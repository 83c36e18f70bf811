/**
 * `signal-kit topics search` and `signal-kit signal-types` end to end: the CLI in child processes, a worker making the
 * call with its own key on the rate-limited API queue, and the sandbox answering (its call log is the truth).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type JobEnv, startJobEnv } from '../../testkit/job-env.ts';
import type { WorkerHandle } from '../../workers/worker.ts';
import { type CliResult, repoRoot, runCli } from '../helpers/cli.ts';

let env: JobEnv;
let worker: WorkerHandle | undefined;

function cli(args: string[]): Promise<CliResult> {
  // The CLI is given no key at all: only the worker holds one.
  const childEnv = env.childEnv();
  delete childEnv['SIGNAL_API_KEY'];
  return runCli(args, { cwd: repoRoot, env: childEnv, timeout: 30_000 }, 'throw');
}

beforeAll(async () => {
  env = await startJobEnv();
  worker = await env.startWorker();
});

afterAll(async () => {
  await worker?.shutdown();
  await env?.stop();
});

describe('signal-kit topics search', () => {
  it('prints the matching topics as a table, and the same answer as JSON with --json', async () => {
    const mark = env.sandbox.truth.lastCall();
    const table = await cli(['topics', 'search', 'payroll', '--limit', '5']);
    expect(table.code, table.stderr).toBe(0);
    const lines = table.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^TOPIC ID\s+CATEGORY\s+NAME$/);
    const rows = lines.slice(2, 7);
    expect(rows).toHaveLength(5);
    for (const row of rows) expect(row).toMatch(/^b2b_\d+\s+.*payroll/i);
    expect(table.stdout).toMatch(/more topics match: add --cursor \S+/);

    const json = await cli(['topics', 'search', 'payroll', '--limit', '5', '--json']);
    expect(json.code, json.stderr).toBe(0);
    const answer = JSON.parse(json.stdout) as { topics: { topic_id: string; name: string }[]; next_cursor: string };
    expect(answer.topics.map((t) => t.topic_id)).toEqual(rows.map((row) => row.split(/\s+/)[0]));
    for (const topic of answer.topics) expect(topic.name.toLowerCase()).toContain('payroll');

    // Two calls, both by the worker (the CLI had no key), both free.
    const calls = env.sandbox.truth.calls({ after: mark, path: '/v1/buyer-intent/topics' });
    expect(calls.map((c) => [c.status, c.credits])).toEqual([
      [200, 0],
      [200, 0],
    ]);
  });

  it('follows the printed cursor to the next page', async () => {
    const first = JSON.parse((await cli(['topics', 'search', 'crm', '--limit', '3', '--json'])).stdout) as {
      topics: { topic_id: string }[];
      next_cursor: string;
    };
    const next = await cli(['topics', 'search', 'crm', '--limit', '3', '--cursor', first.next_cursor, '--json']);
    const second = JSON.parse(next.stdout) as { topics: { topic_id: string }[] };
    const ids = [...first.topics, ...second.topics].map((t) => t.topic_id);
    expect(new Set(ids).size).toBe(6);
  });

  it('names the mistake and exits 2', async () => {
    const missing = await cli(['topics', 'search']);
    expect(missing.code).toBe(2);
    const bad = await cli(['topics', 'search', 'crm', '--limit', 'ten']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--limit must be a positive integer/);
  });
});

describe('signal-kit signal-types', () => {
  it('lists every type the service serves, with its subtypes in --json', async () => {
    const table = await cli(['signal-types']);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toMatch(/^SIGNAL TYPE\s+CATEGORY\s+SIGNALS\s+SUBTYPES$/m);
    expect(table.stdout).toMatch(/^news\s+news\s+\d+\s+companyNews/m);
    const json = JSON.parse((await cli(['signal-types', '--json'])).stdout) as {
      types: { signal_type: string; subtypes: string[] }[];
    };
    const web = json.types.find((t) => t.signal_type === 'website-intelligence');
    expect(web?.subtypes).toHaveLength(38);
    for (const type of json.types) expect(table.stdout).toMatch(new RegExp(`^${type.signal_type}\\s`, 'm'));
  });
});
