/**
 * Promises of the job commands, as a user meets them (`signal-kit` in child processes, a real Temporal dev server,
 * the sandbox): a job whose batches fail after their retries ends `completed_with_errors` with exit code 4 and a
 * re-run sends only those batches; the job id derived from input, output and options names the job (the same
 * command is the same job, any change is another); and the API key never appears in workflow history or in what
 * the worker and the CLI print.
 */
import { writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobResult } from '../../activities/jobs/types.ts';
import { DEFAULT_ACCOUNT_ID, SANDBOX_EPOCH_MS } from '../../sandbox/index.ts';
import { type ChildWorker, runCli, startChildWorker } from '../../testkit/cli-process.ts';
import { removeTempDirs, tempDir } from '../../testkit/drill-input.ts';
import { type JobEnv, startJobEnv } from '../../testkit/job-env.ts';
import { decodeHistory } from '../helpers/history-text.ts';
import { callsTo, PATHS } from '../promises/oracle.ts';

const CLOCK = SANDBOX_EPOCH_MS + 60 * 86_400_000;
/** A key only this test uses, so that finding it anywhere is finding a leak. */
const CANARY_KEY = 'sk_canary_7f3a9c1e5b2d4f60';

/**
 * Forwards API calls to the sandbox, except that while `failing` it answers a bulk call that names a domain with
 * "broken" in it with JSON of the wrong shape: the kit cannot use it and does not retry it, so the batch fails.
 */
async function startShapeBreaker(target: string): Promise<{ url: string; failing: boolean; close(): Promise<void> }> {
  const state = { failing: true };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', async () => {
      const body = Buffer.concat(chunks);
      if (state.failing && req.url === PATHS.enrichBulk && body.toString().includes('broken')) {
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"unexpected":"shape"}');
        return;
      }
      const headers = Object.fromEntries(
        Object.entries(req.headers).filter(([name]) => !['host', 'content-length', 'connection'].includes(name)),
      ) as Record<string, string>;
      const answer = await fetch(`${target}${req.url}`, {
        method: req.method,
        headers,
        ...(body.length ? { body } : {}),
      });
      const out: Record<string, string> = {};
      answer.headers.forEach((value, name) => {
        if (name !== 'content-length' && name !== 'transfer-encoding' && name !== 'content-encoding') out[name] = value;
      });
      res.writeHead(answer.status, out).end(Buffer.from(await answer.arrayBuffer()));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get failing() {
      return state.failing;
    },
    set failing(value: boolean) {
      state.failing = value;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('job command promises', () => {
  let env: JobEnv;
  let dir: string;
  let breaker: Awaited<ReturnType<typeof startShapeBreaker>>;
  let worker: ChildWorker;
  let cliEnv: Record<string, string>;

  beforeAll(async () => {
    env = await startJobEnv({ sandbox: { seed: 51, clock: () => CLOCK } });
    env.sandbox.accounts.addKey(DEFAULT_ACCOUNT_ID, CANARY_KEY);
    breaker = await startShapeBreaker(env.sandbox.url);
    dir = await tempDir('job-promises');
    // The worker as deployed, with the canary key and every log line it can print.
    worker = await startChildWorker(
      env.childEnv({ SIGNAL_API_URL: breaker.url, SIGNAL_API_KEY: CANARY_KEY, SIGNAL_KIT_LOG_LEVEL: 'DEBUG' }),
      60_000,
      { tailLines: 1_000_000 },
    );
    // The CLI needs no key at all: give it none.
    cliEnv = env.childEnv({ SIGNAL_API_KEY: '' });
  });
  afterAll(async () => {
    await worker?.stop();
    await breaker?.close();
    await env?.stop();
    await removeTempDirs();
  });

  const printed: string[] = [];
  const enrich = async (args: string[]) => {
    const result = await runCli(['enrich', ...args, '--wait'], cliEnv, 120_000);
    printed.push(result.stdout, result.stderr);
    return result;
  };

  it('batches that fail after their retries: exit 4, their rows are error lines; a re-run sends only them', async () => {
    // 5 batches of 100; batches 1 and 3 hold a domain the breaker answers with the wrong shape.
    const domains = Array.from({ length: 500 }, (_, i) => (i === 150 || i === 350 ? `broken${i}.com` : `fine${i}.com`));
    await writeFile(join(dir, 'crm.csv'), `domain\n${domains.join('\n')}\n`);
    const args = ['--input', join(dir, 'crm.csv'), '--output', join(dir, 'out'), '--limit', '2'];

    const mark = env.sandbox.truth.lastCall();
    const first = await enrich(args);
    expect(first.code, first.stderr).toBe(4);
    const job = JSON.parse(first.stdout) as JobResult;
    expect(job.status).toBe('completed_with_errors');
    expect(job.counts.error).toBeGreaterThanOrEqual(200);
    // The three good batches reached the service once each; the broken ones never got a usable answer.
    expect(callsTo(env.sandbox, PATHS.enrichBulk, mark)).toHaveLength(3);

    breaker.failing = false;
    const again = env.sandbox.truth.lastCall();
    const second = await enrich(args);
    expect(second.code, second.stderr).toBe(0);
    const done = JSON.parse(second.stdout) as JobResult;
    expect(done.jobId).toBe(job.jobId);
    expect(done.status).toBe('completed');
    expect(done.counts.error).toBe(0);
    expect(done.counts.ok + done.counts.not_found).toBe(500);
    // Only the two failed batches were sent again.
    const resent = callsTo(env.sandbox, PATHS.enrichBulk, again);
    expect(resent).toHaveLength(2);
  }, 240_000);

  it('the derived job id: the same command is the same job, any change of input, output or options another', async () => {
    await writeFile(join(dir, 'a.csv'), 'domain\nalpha-1.com\nalpha-2.com\n');
    await writeFile(join(dir, 'b.csv'), 'domain\nalpha-1.com\nalpha-2.com\n');
    const base = ['--input', join(dir, 'a.csv'), '--output', join(dir, 'ids'), '--limit', '3'];
    const first = await enrich(base);
    expect(first.code, first.stderr).toBe(0);
    const id = (JSON.parse(first.stdout) as JobResult).jobId;

    // The same command again: the same job, finished, and not one call to the service.
    const mark = env.sandbox.truth.lastCall();
    const same = await enrich(base);
    expect(same.code, same.stderr).toBe(0);
    expect((JSON.parse(same.stdout) as JobResult).jobId).toBe(id);
    expect(env.sandbox.truth.calls({ after: mark })).toEqual([]);

    const variants = [
      ['--input', join(dir, 'b.csv'), '--output', join(dir, 'ids'), '--limit', '3'],
      ['--input', join(dir, 'a.csv'), '--output', join(dir, 'ids2'), '--limit', '3'],
      ['--input', join(dir, 'a.csv'), '--output', join(dir, 'ids'), '--limit', '4'],
      [...base, '--signal-types', 'news'],
      [...base, '--compression', 'none'],
    ];
    const ids = new Set([id]);
    for (const variant of variants) {
      const result = await enrich(variant);
      expect(result.code, result.stderr).toBe(0);
      ids.add((JSON.parse(result.stdout) as JobResult).jobId);
    }
    expect(ids.size).toBe(variants.length + 1);
  }, 240_000);

  it('the API key is in no workflow history and in nothing the worker or the CLI printed', async () => {
    // Every payload decoded first: as stored, arguments and results are base64 bytes that no search would match.
    const histories: string[] = [];
    let payloads = 0;
    for await (const execution of env.client.workflow.list()) {
      const history = await env.client.workflow.getHandle(execution.workflowId, execution.runId).fetchHistory();
      const decoded = await decodeHistory(history);
      expect(decoded.undecoded, execution.workflowId).toBe(0);
      payloads += decoded.payloads;
      histories.push(decoded.text);
    }
    // The jobs above, the rate limiter and their activities are all there to search.
    expect(histories.length).toBeGreaterThanOrEqual(8);
    expect(payloads).toBeGreaterThan(histories.length);
    expect(histories.filter((h) => h.includes(CANARY_KEY))).toEqual([]);

    // The search can fail: a key planted in a workflow's input is found (a search of the raw history misses it).
    const planted = 'sk_planted_2b9e41c07d3a';
    // A job whose input names the key: its start event holds it. No worker ever runs it (another task queue).
    const plantedJob = await env.client.workflow.start('bulkEnrich', {
      workflowId: 'planted-key',
      taskQueue: 'nobody-polls-this-queue',
      args: [{ jobId: 'planted-key', input: join(dir, `key=${planted}.csv`), output: join(dir, 'planted') }],
    });
    const history = await env.client.workflow.getHandle('planted-key').fetchHistory();
    expect(JSON.stringify(history)).not.toContain(planted);
    expect((await decodeHistory(history)).text).toContain(planted);
    await plantedJob.terminate('planted for the search only');
    const logs = worker.output();
    expect(logs.length).toBeGreaterThan(0);
    expect(logs).not.toContain(CANARY_KEY);
    expect(printed.join('\n')).not.toContain(CANARY_KEY);
    // Nor in any form a header would carry it.
    expect(logs).not.toContain(CANARY_KEY.slice(3));
  }, 60_000);
});
