/**
 * The longer worker-kill drill: a bigger enrichment and more SIGKILLs than the test suite's version
 * (test/drills/worker-kill.test.ts), in both modes, against an uninterrupted run of the same input.
 *
 *   node bench/drills/worker-kill.ts [--domains 20000] [--kills 20] [--seed 7] [--mode all|saved,sigterm,anywhere]
 *
 * `saved`: SIGKILLs at seeded random points where every call the sandbox answered is saved (new calls are held at a
 * recording proxy, so the worker dies with calls hanging in it that never reached the service): the credits must
 * equal the uninterrupted run's. `sigterm`: a deploy's SIGTERM at any instant (the worker drains): equal credits too.
 * `anywhere`: SIGKILLs at any instant: the extra credits must be exactly those of the calls the service answered
 * (or was still answering) that the dying worker had not saved; with no idempotency key those are paid again.
 * In both: the job completes, the same lines as the uninterrupted run, every part intact.
 * Prints a table; exits 1 when an invariant does not hold.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { SANDBOX_EPOCH_MS } from '../../sandbox/index.ts';
import { startApiProxy } from '../../testkit/api-proxy.ts';
import { type ChildWorker, startChildWorker } from '../../testkit/cli-process.ts';
import { removeTempDirs, tempDir, writeDomainsCsv } from '../../testkit/drill-input.ts';
import { startJobEnv } from '../../testkit/job-env.ts';
import { checkJobOutput } from '../../testkit/job-output.ts';
import { type KillDrillOutcome, runKillDrill } from '../../testkit/kill-drill.ts';

const { values } = parseArgs({
  options: {
    domains: { type: 'string', default: '20000' },
    kills: { type: 'string', default: '20' },
    seed: { type: 'string', default: '7' },
    mode: { type: 'string', default: 'all' },
  },
});
const domains = Number(values.domains);
const killCount = Number(values.kills);
const seed = Number(values.seed);
type Mode = 'saved' | 'anywhere' | 'sigterm';
const modes = (values.mode === 'all' ? ['saved', 'sigterm', 'anywhere'] : values.mode.split(',')) as Mode[];
if (!modes.every((mode) => ['saved', 'anywhere', 'sigterm'].includes(mode)) || !(domains > 0) || !(killCount >= 0)) {
  console.error(
    'usage: node bench/drills/worker-kill.ts [--domains N] [--kills N] [--seed N] [--mode all|saved,sigterm,anywhere]',
  );
  process.exit(2);
}

const env = await startJobEnv({
  sandbox: { seed, clock: () => SANDBOX_EPOCH_MS + 90 * 86_400_000, faults: { latencyMs: 100 } },
});
const proxy = await startApiProxy(env.sandbox.url);
const workerEnv = env.childEnv({ SIGNAL_API_URL: proxy.url });
let worker: ChildWorker = await startChildWorker(workerEnv);
let failed = false;
try {
  const dir = await tempDir('bench-kill');
  const input = await writeDomainsCsv(dir, 'crm.csv', { distinct: domains, seed });
  const jobInput = (jobId: string) => ({
    jobId,
    input: input.url,
    output: pathToFileURL(join(dir, jobId)).href,
    options: { limit: 2 },
    concurrency: 4,
  });
  const c = env.config();
  const started = Date.now();
  const before = env.sandbox.ledger.total();
  await env.client.workflow.execute('bulkEnrich', {
    workflowId: 'baseline',
    taskQueue: c.taskQueue,
    args: [{ ...jobInput('baseline'), taskQueue: c.taskQueue, apiTaskQueue: c.apiTaskQueue }],
  });
  const baselineCost = env.sandbox.ledger.total() - before;
  const baselineMs = Date.now() - started;
  const baseline = await checkJobOutput(jobInput('baseline').output, 'baseline', input);

  const rows: string[][] = [
    ['run', 'kills', 'mid-call kills', 'median recovery', 'wall', 'credits', 'lost answers', 'extra credits', 'ok'],
    ['uninterrupted', '0', '-', '-', `${(baselineMs / 1000).toFixed(1)} s`, String(baselineCost), '-', '-', 'yes'],
  ];
  for (const mode of modes) {
    let outcome: KillDrillOutcome | undefined;
    const problems: string[] = [];
    try {
      outcome = await runKillDrill({
        env,
        proxy,
        worker,
        workerEnv,
        workflow: 'bulkEnrich',
        input: jobInput(`drill-${mode}`),
        kills: killCount,
        seed: seed + (mode === 'saved' ? 0 : 1),
        mode,
      });
      worker = outcome.worker;
      const checked = await checkJobOutput(jobInput(`drill-${mode}`).output, `drill-${mode}`, input);
      if (checked.lineSet.join('\n') !== baseline.lineSet.join('\n')) problems.push('lines differ from the baseline');
      const extra = outcome.lost.reduce((sum, call) => sum + call.credits, 0);
      if (outcome.result.status !== 'completed') problems.push(`status ${outcome.result.status}`);
      if (outcome.charged !== baselineCost + extra)
        problems.push(`charged ${outcome.charged} ≠ ${baselineCost} + ${extra}`);
      if (mode !== 'anywhere' && extra !== 0) problems.push(`${extra} credits lost in ${mode} mode`);
      for (const [batch, times] of outcome.paidPerBatch) {
        const losses = outcome.lost.filter((call) => call.credits > 0 && outcome!.batchOf(call) === batch).length;
        if (times !== 1 + losses) problems.push(`batch ${batch} paid ${times} times, ${losses} lost`);
      }
    } catch (error) {
      problems.push(error instanceof Error ? error.message : String(error));
    }
    if (problems.length) {
      failed = true;
      console.error(`${mode}: ${problems.join('; ')}`);
    }
    const recoveries = (outcome?.kills ?? []).map((kill) => kill.recoveryMs).sort((a, b) => a - b);
    const median = recoveries.length ? recoveries[Math.floor(recoveries.length / 2)]! : 0;
    rows.push([
      mode,
      String(outcome?.kills.length ?? '-'),
      mode === 'saved' ? String(outcome?.kills.filter((kill) => kill.heldCalls > 0).length ?? '-') : '-',
      `${(median / 1000).toFixed(1)} s`,
      outcome ? `${(outcome.wallMs / 1000).toFixed(1)} s` : '-',
      String(outcome?.charged ?? '-'),
      String(outcome?.lost.length ?? '-'),
      String(outcome?.lost.reduce((sum, call) => sum + call.credits, 0) ?? '-'),
      problems.length ? 'NO' : 'yes',
    ]);
  }
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  console.log(`\nworker-kill drill: ${domains} domains, seed ${seed}\n`);
  for (const row of rows) console.log(row.map((cell, i) => cell.padEnd(widths[i]!)).join('  '));
} finally {
  await worker.kill();
  await proxy.stop();
  await env.stop();
  await removeTempDirs();
}
process.exitCode = failed ? 1 : 0;
