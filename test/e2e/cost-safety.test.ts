/**
 * Cost safety as a user meets it: `--dry-run` counts the input and bounds its cost without starting a workflow or
 * calling the service (every call to the sandbox goes through a counting proxy), its worst case holds for the real
 * run, its expected figure is the rate the account really paid; `--wait` and `status` say when no worker polls the
 * job's queues and exit with the same codes for a finished job. Real Temporal dev server, versitygw and sandbox.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { WorkflowNotFoundError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobResult, Manifest } from '../../activities/jobs/types.ts';
import { openStore } from '../../config/storage.ts';
import type { DryRunReport } from '../../library/dry-run.ts';
import { type ApiProxy, startApiProxy } from '../../testkit/api-proxy.ts';
import { runCli } from '../../testkit/cli-process.ts';
import { type JobEnv, startJobEnv } from '../../testkit/job-env.ts';

let env: JobEnv;
let proxy: ApiProxy;
let dir: string;
const bucket = 'cost-safety';
const output = `s3://${bucket}/out`;

/** A CRM export of `rows` rows: every 50th row junk, the rest `count` distinct domains written in varying forms. */
function crmCsv(prefix: string, rows: number, count: number): { text: string; distinct: number; invalid: number } {
  const lines = ['website'];
  const domains = new Set<string>();
  let invalid = 0;
  for (let i = 0; i < rows; i++) {
    if (i % 50 === 0) {
      lines.push('not a domain');
      invalid += 1;
      continue;
    }
    const n = i % count;
    domains.add(`${prefix}${n}.com`);
    lines.push(i % 2 ? `https://www.${prefix}${n}.com/about` : `${prefix.toUpperCase()}${n}.COM`);
  }
  return { text: `${lines.join('\n')}\n`, distinct: domains.size, invalid };
}

const charged = () => env.sandbox.accounts.get()?.charged ?? 0;

async function cli(args: string[], extra: Record<string, string> = {}) {
  return runCli(args, env.childEnv({ SIGNAL_API_URL: proxy.url, ...extra }), 90_000);
}

async function dryRun(args: string[]): Promise<DryRunReport> {
  const callsBefore = proxy.calls.length;
  const chargedBefore = charged();
  const result = await cli([...args, '--dry-run']);
  expect(result.code, result.stderr).toBe(0);
  // Not one request reached the service, paid or free, and nothing was charged.
  expect(proxy.calls.length).toBe(callsBefore);
  expect(charged()).toBe(chargedBefore);
  return JSON.parse(result.stdout) as DryRunReport;
}

async function expectNoWorkflow(jobId: string): Promise<void> {
  await expect(env.client.workflow.getHandle(jobId).describe()).rejects.toBeInstanceOf(WorkflowNotFoundError);
}

describe('cost safety', () => {
  beforeAll(async () => {
    env = await startJobEnv({ s3: true, sandbox: { seed: 21 } });
    proxy = await startApiProxy(env.sandbox.url);
    await env.createBuckets(bucket);
    await env.startWorker({ url: proxy.url });
    dir = await mkdtemp(join(tmpdir(), 'signal-kit-cost-'));
  });
  afterAll(async () => {
    await env?.stop();
    await proxy?.stop();
  });

  it('enrich --dry-run counts an S3 input, bounds its cost, starts nothing, and the real run stays within it', {
    timeout: 180_000,
  }, async () => {
    const input = crmCsv('dryshop', 250, 180);
    await openStore(`s3://${bucket}/in`).writeText('crm.csv', input.text);
    const args = ['enrich', '--input', `s3://${bucket}/in/crm.csv`, '--output', output, '--limit', '3'];

    const report = await dryRun([...args, '--job-id', 'dry-enrich']);
    expect(report).toMatchObject({
      dryRun: true,
      jobId: 'dry-enrich',
      kind: 'enrich',
      rows: 250,
      distinct: input.distinct,
      duplicates: 250 - input.distinct - input.invalid,
      invalid: input.invalid,
      batches: Math.ceil(input.distinct / 100),
      calls: Math.ceil(input.distinct / 100),
    });
    expect(report.credits.worstCase).toBe(input.distinct * 3 * 2);
    // Nothing learned yet under this output: the expected figure is the worst case, and says so.
    expect(report.credits.expected).toBe(report.credits.worstCase);
    expect(report.credits.expectedBasis).toMatch(/no earlier completed enrich job/);
    await expectNoWorkflow('dry-enrich');
    const written: string[] = [];
    for await (const info of openStore(output).list('')) written.push(info.key);
    expect(written).toEqual([]);

    const before = charged();
    const run = await cli([...args, '--job-id', 'dry-enrich', '--wait']);
    expect(run.code, run.stderr).toBe(0);
    const result = JSON.parse(run.stdout) as JobResult;
    const paid = charged() - before;
    expect(paid).toBeGreaterThan(0);
    expect(paid).toBeLessThanOrEqual(input.distinct * 3 * 2);
    const manifest = JSON.parse(await openStore(output).readText('dry-enrich/_manifest.json')) as Manifest;
    expect(manifest.batches.total).toBe(report.batches);
    expect(result.counts).toMatchObject({ input_rows: 250, distinct: report.distinct, invalid: report.invalid });

    // The same job again costs nothing (it returns its manifest), and the dry run says so.
    const again = await dryRun([...args, '--job-id', 'dry-enrich']);
    expect(again.credits.expected).toBe(0);

    // A new input under the same output: expected = its distinct domains at the rate the account just paid.
    const next = crmCsv('nextshop', 120, 110);
    await openStore(`s3://${bucket}/in`).writeText('next.csv', next.text);
    const nextArgs = ['enrich', '--input', `s3://${bucket}/in/next.csv`, '--output', output, '--limit', '3'];
    const estimate = await dryRun([...nextArgs, '--job-id', 'dry-next']);
    expect(estimate.distinct).toBe(next.distinct);
    expect(estimate.credits.expected).toBe(Math.round(next.distinct * (paid / input.distinct)));
    expect(estimate.credits.expectedBasis).toMatch(/1 earlier completed enrich job/);
    // Other filters are another rate: nothing to learn from.
    const otherFilters = await dryRun([...nextArgs, '--limit', '5', '--job-id', 'dry-next-5']);
    expect(otherFilters.credits.expected).toBe(next.distinct * 5 * 2);
    await expectNoWorkflow('dry-next');
  });

  it('verify-emails and intent-export --dry-run: distinct addresses and topics, the export priced from history', {
    timeout: 180_000,
  }, async () => {
    const emails = ['{"email":"ann@corp.com"}', '{"email":"ANN@CORP.COM"}', '{"email":"bob@corp.com"}', 'not json'];
    await writeFile(join(dir, 'emails.jsonl'), `${emails.join('\n')}\n`);
    const verify = await dryRun([
      'verify-emails',
      '--input',
      pathToFileURL(join(dir, 'emails.jsonl')).href,
      '--output',
      output,
      '--job-id',
      'dry-verify',
    ]);
    // "ANN@CORP.COM" is ann@corp.com: the service treats an address as one whatever its case (local part included).
    expect(verify).toMatchObject({ rows: 4, distinct: 2, duplicates: 1, invalid: 1, batches: 1, calls: 1 });
    expect(verify.credits.worstCase).toBe(2);
    await expectNoWorkflow('dry-verify');

    const topics = ['intent-export', '--topics', 'b2b_5,b2b_7,b2b_5', '--output', output];
    const first = await dryRun([...topics, '--job-id', 'dry-intent']);
    expect(first).toMatchObject({ rows: 3, distinct: 2, duplicates: 1, batches: 1, calls: 1 });
    expect(first.credits.worstCase).toBeNull();
    expect(first.credits.expected).toBeNull();
    await expectNoWorkflow('dry-intent');

    const before = charged();
    const run = await cli([
      'intent-export',
      '--topics',
      'b2b_9',
      '--output',
      output,
      '--job-id',
      'real-intent',
      '--wait',
    ]);
    expect(run.code, run.stderr).toBe(0);
    const perTopic = charged() - before;
    const second = await dryRun([...topics, '--job-id', 'dry-intent']);
    expect(second.credits.expected).toBe(2 * perTopic);
  });

  it('--wait with no worker on the queues says so, starts nothing and exits 6; status exits like --wait', {
    timeout: 180_000,
  }, async () => {
    const input = join(dir, 'few.csv');
    await writeFile(input, 'domain\nacme.com\nglobex.com\n');
    const lonely = { SIGNAL_KIT_TASK_QUEUE: 'nobody-main', SIGNAL_KIT_API_TASK_QUEUE: 'nobody-api' };
    const args = ['enrich', '--input', input, '--output', output, '--job-id', 'no-worker'];
    const wait = await cli([...args, '--wait'], lonely);
    expect(wait.code).toBe(6);
    expect(wait.stderr).toMatch(/no worker polls task queue "nobody-main" and "nobody-api".*nothing was started/);
    await expectNoWorkflow('no-worker');

    // Started without --wait, the job sits on a queue nobody polls: status says so with the same code.
    const started = await cli(args, lonely);
    expect(started.code, started.stderr).toBe(0);
    const status = await cli(['status', 'no-worker'], lonely);
    expect(status.code).toBe(6);
    expect(JSON.parse(status.stdout)).toMatchObject({ jobId: 'no-worker', status: 'RUNNING' });
    expect(status.stderr).toMatch(/no worker polls task queue "nobody-main"/);
    await env.client.workflow.getHandle('no-worker').terminate('test done');

    // A job that is running with a worker: every upstream check fails, so it keeps retrying for minutes.
    env.sandbox.setFaults({ verifyUpstreamFailureRate: 1 });
    try {
      const emails = join(dir, 'slow.csv');
      await writeFile(emails, 'email\nann@corp.com\n');
      const slow = await cli(['verify-emails', '--input', emails, '--output', output, '--job-id', 'slow-verify']);
      expect(slow.code, slow.stderr).toBe(0);
      const running = await cli(['status', 'slow-verify']);
      expect(running.code, running.stderr).toBe(5);
      expect(JSON.parse(running.stdout)).toMatchObject({ jobId: 'slow-verify', status: 'RUNNING' });
    } finally {
      env.sandbox.setFaults({});
      await env.client.workflow.getHandle('slow-verify').terminate('test done');
    }

    // A finished job: status exits with the code --wait gave it (3, budget exhausted).
    const budget = [
      'enrich',
      '--input',
      input,
      '--output',
      output,
      '--limit',
      '3',
      '--max-credits',
      '7',
      '--job-id',
      'budget',
    ];
    const waited = await cli([...budget, '--wait']);
    expect(waited.code, waited.stderr).toBe(3);
    const budgetStatus = await cli(['status', 'budget']);
    expect(budgetStatus.code).toBe(3);
    expect(JSON.parse(budgetStatus.stdout)).toMatchObject({
      status: 'COMPLETED',
      result: { status: 'budget_exhausted' },
    });
  });
});
