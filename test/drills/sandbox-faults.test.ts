/**
 * Fault drill: the service misbehaves the way real ones do (issue 6): 10% of calls answered 5xx (some with an HTML
 * body), 429 bursts with Retry-After, connections reset without an answer, and export downloads cut off part-way.
 * A bulk enrichment and an intent export run through it; each must account for every input exactly once, publish
 * only complete parts, and cost on the sandbox's ledger exactly what the spec charges for what exists (its truth)
 * (the sandbox never charges a faulted call, so any difference would be the kit paying twice).
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { JobResult } from '../../activities/jobs/types.ts';
import { type FaultOptions, SANDBOX_EPOCH_MS } from '../../sandbox/index.ts';
import { checkJobOutput, readCheckedParts } from '../../testkit/job-output.ts';
import { maxAttempt } from '../../testkit/kill-drill.ts';
import type { BulkEnrichInput } from '../../workflows/bulk-enrich.ts';
import type { IntentExportInput } from '../../workflows/intent-export.ts';
import { enrichTruthCredits } from '../helpers/truth-checks.ts';
import { exportIdeal } from '../promises/oracle.ts';
import { useProxiedDrill } from './proxied-drill.ts';

const CLOCK = SANDBOX_EPOCH_MS + 150 * 86_400_000;
const PROFILE: FaultOptions = {
  errorRate: 0.1,
  rateLimitBurst: { every: 20, length: 3, retryAfterS: 1 },
  resetRate: 0.05,
  truncateDownloads: 0.5,
};

describe('drill: a sandbox with 5xx, 429 bursts, resets and truncated downloads', () => {
  const drill = useProxiedDrill({
    label: 'faults',
    env: { sandbox: { seed: 13, clock: () => CLOCK, exportTiming: { queuedMs: 0, runningMs: 0 } } },
    csv: { distinct: 5_000, seed: 31 },
  });

  const execute = async (workflow: string, args: { jobId: string }): Promise<{ result: JobResult; cost: number }> => {
    const { env } = drill;
    const c = env.config();
    const before = env.sandbox.ledger.total();
    const result: JobResult = await env.client.workflow.execute(workflow, {
      workflowId: args.jobId,
      taskQueue: c.taskQueue,
      args: [{ ...args, taskQueue: c.taskQueue, apiTaskQueue: c.apiTaskQueue }],
    });
    return { result, cost: env.sandbox.ledger.total() - before };
  };
  const enrich = (jobId: string): BulkEnrichInput => ({
    jobId,
    input: drill.input.url,
    output: pathToFileURL(join(drill.dir, 'out')).href,
    options: { limit: 3 },
    concurrency: 6,
  });
  const intent = (jobId: string): IntentExportInput => ({
    jobId,
    output: pathToFileURL(join(drill.dir, 'out')).href,
    request: { topic_ids: ['b2b_21', 'b2b_22', 'b2b_23'] },
    poll: { initialMs: 100, maxMs: 500 },
  });
  it('an enrichment and an intent export: every input once, complete parts, the credits the spec charges', async () => {
    const { env, proxy, dir, input } = drill;
    const output = pathToFileURL(join(dir, 'out')).href;
    // The export's lines of a fault-free run, to compare contents with (the costs come from the sandbox's truth).
    const cleanExport = await execute('intentExport', intent('faults-export-baseline'));
    expect(cleanExport.result.status).toBe('completed');
    const expectedExport = await readCheckedParts(output, 'faults-export-baseline');

    env.sandbox.setFaults(PROFILE);
    const firstCall = proxy.calls.length;
    let faulty: Awaited<ReturnType<typeof execute>>;
    let faultyExport: Awaited<ReturnType<typeof execute>>;
    try {
      // One after the other, so that each job's ledger delta is its own.
      faulty = await execute('bulkEnrich', enrich('faults-drill'));
      faultyExport = await execute('intentExport', intent('faults-export-drill'));
    } finally {
      env.sandbox.setFaults({});
    }

    // The faults were there: 5xx, 429s and resets on the API, and downloads that needed another attempt.
    const calls = proxy.calls.slice(firstCall);
    const tally = {
      calls: calls.length,
      serverErrors: calls.filter((c) => (c.status ?? 0) >= 500).length,
      rateLimited: calls.filter((c) => c.status === 429).length,
      reset: calls.filter((c) => c.status === undefined).length,
      downloadAttempts: await maxAttempt(env.client, 'faults-export-drill', 'downloadIntentExport'),
    };
    console.log(`sandbox-faults: ${JSON.stringify(tally)}; credits ${faulty.cost}+${faultyExport.cost}`);
    expect(tally.serverErrors).toBeGreaterThan(0);
    expect(tally.rateLimited).toBeGreaterThan(0);
    expect(tally.reset).toBeGreaterThan(0);
    expect(tally.downloadAttempts).toBeGreaterThan(1);

    expect(faulty.result.status).toBe('completed');
    const drilled = await checkJobOutput(output, 'faults-drill', input);
    // Paid once: what the spec charges for the signals that exist for the distinct domains.
    expect(faulty.cost).toBe(enrichTruthCredits(env.sandbox, input, drilled.lines, 3));
    expect(faulty.result.credits).toBe(faulty.cost);

    expect(faultyExport.result.status).toBe('completed');
    const exported = await readCheckedParts(output, 'faults-export-drill');
    expect(exported.lines.length).toBeGreaterThan(0);
    const sorted = (lines: unknown[]) => lines.map((line) => JSON.stringify(line)).sort();
    expect(sorted(exported.lines)).toEqual(sorted(expectedExport.lines));
    const ideal = exportIdeal(env.sandbox, intent('x').request);
    expect(exported.lines).toHaveLength(ideal.rowCount);
    expect(faultyExport.cost).toBe(ideal.credits);
    expect(faultyExport.result.credits).toBe(faultyExport.cost);
  }, 120_000);
});
