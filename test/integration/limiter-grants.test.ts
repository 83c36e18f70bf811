/**
 * The account's rate limiter (workflows/rate-limiter.ts) past 1,000 requests on a real dev server: its run
 * continues as new by 1,000 requests carrying the next free slot and the count of grants, its update validator refuses bad
 * requests without recording them, and a run with no request for 10 minutes ends. Timers run on a fast clock
 * (test/fixtures/fast-timers.ts): the idle wait the workflow asks for is read from the history, then waited 1/200th.
 */
import { fileURLToPath } from 'node:url';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type JobEnv, startJobEnv } from '../../testkit/job-env.ts';
import { startWorker, workflowsPath } from '../../workers/worker.ts';
import {
  apiRateLimiter,
  apiRateLimiterId,
  reserveSlotsUpdate,
  type SlotRequest,
  slotsGrantedQuery,
} from '../../workflows/rate-limiter.ts';
import { type SlotGrant, slotIntervalMs } from '../../workflows/rate-limiter-schedule.ts';
import { requestedWaits } from '../helpers/fast-timers.ts';

const fastTimers = fileURLToPath(new URL('../fixtures/fast-timers.ts', import.meta.url));
const DIVISOR = 200;

describe('the account rate limiter past 1,000 requests', () => {
  let env: JobEnv;
  let limiterId: string;

  beforeAll(async () => {
    const [started, bundle] = await Promise.all([
      startJobEnv(),
      bundleWorkflowCode({
        workflowsPath: workflowsPath(),
        workflowInterceptorModules: [fastTimers],
        logger: new DefaultLogger('WARN'),
      }),
    ]);
    env = started;
    await startWorker({ config: env.config(), workflowBundle: bundle });
    // A limiter of its own (the worker warms up the one of its API queue).
    limiterId = apiRateLimiterId(`${env.config().apiTaskQueue}-grants`);
  }, 120_000);
  afterAll(async () => {
    await env?.stop();
  });

  const ask = (request: SlotRequest) =>
    env.client.workflow.getHandle(limiterId).executeUpdate(reserveSlotsUpdate, { args: [request] });

  it('continues as new by 1,000 requests with its next slot and count, refuses bad requests, and ends when idle', async () => {
    const first = await env.client.workflow.start(apiRateLimiter, {
      workflowId: limiterId,
      taskQueue: env.config().taskQueue,
      args: [{}],
      memo: { fastTimers: { divisor: DIVISOR } },
    });

    // The validator refuses before anything is recorded: these count as no request.
    const refusals: [SlotRequest, RegExp][] = [
      [{ count: 0, perMinute: 60 }, /count must be an integer from 1 to 256/],
      [{ count: 257, perMinute: 60 }, /count must be an integer from 1 to 256/],
      [{ count: 1.5, perMinute: 60 }, /count must be an integer/],
      [{ count: 1, perMinute: 0 }, /perMinute must be a positive number/],
      [{ count: 1, perMinute: Number.POSITIVE_INFINITY }, /perMinute must be a positive number/],
      [{ count: 1, perMinute: 60, leadMs: 1_001 }, /leadMs must be a number from 0 to 1000/],
      [{ count: 1, perMinute: 60, leadMs: -1 }, /leadMs must be a number from 0 to 1000/],
    ];
    for (const [request, message] of refusals) {
      const refused = await ask(request).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(refused, JSON.stringify(request)).toBeInstanceOf(WorkflowUpdateFailedError);
      expect(String(((refused as Error).cause as Error | undefined)?.message), JSON.stringify(request)).toMatch(
        message,
      );
    }

    // Requests one at a time, as one worker process asks, each for a slot a second apart: the schedule fills up to
    // 30 s ahead, then requests are told to come back. The run continues as new by its 1,000th request (earlier
    // when the server suggests it: the dev server does at 4,000 history events, some 800 requests).
    const firstRun = env.client.workflow.getHandle(limiterId, first.firstExecutionRunId);
    const answers: SlotGrant[] = [];
    const t0 = Date.now();
    while (answers.length <= 1_000) {
      answers.push(await ask({ count: 1, perMinute: 60 }));
      if (answers.length % 50 === 0 && (await firstRun.describe()).status.name !== 'RUNNING') break;
    }
    console.log(`limiter-grants: ${answers.length} requests in ${Date.now() - t0} ms`);
    const { events } = await firstRun.fetchHistory();
    const carried = events!.at(-1)!.workflowExecutionContinuedAsNewEventAttributes;
    expect(carried, 'the first run continued as new').toBeTruthy();
    // No refused request is in the history; the run took at most 1,000.
    const inFirst = events!.filter((e) => e.workflowExecutionUpdateAcceptedEventAttributes).length;
    expect(inFirst).toBeLessThanOrEqual(1_000);
    expect(inFirst).toBeGreaterThan(30);
    const slots = answers.slice(0, inFirst).flatMap((a) => a.waitsMs.map((w) => a.grantedAt! + w));
    expect(slots.length).toBeGreaterThan(25); // the schedule filled up
    const input = JSON.parse(Buffer.from(carried!.input!.payloads![0]!.data!).toString()) as {
      nextAt: number;
      granted: number;
    };
    expect(input.granted).toBe(slots.length);
    expect(input.nextAt).toBeCloseTo(Math.max(...slots) + slotIntervalMs(60), 3);

    // The next run grants from the carried slot, not from now: no slot is granted twice.
    const handle = env.client.workflow.getHandle(limiterId);
    const next = await ask({ count: 1, perMinute: 60 });
    const nextSlots = next.waitsMs.map((w) => next.grantedAt! + w);
    if (nextSlots.length === 0)
      expect(next.grantedAt! + next.retryInMs! + 30_000).toBeGreaterThanOrEqual(input.nextAt - 1);
    for (const at of nextSlots) expect(at).toBeGreaterThanOrEqual(input.nextAt - 0.001);
    const later = answers.slice(inFirst).reduce((sum, a) => sum + a.waitsMs.length, 0) + nextSlots.length;
    expect(await handle.query(slotsGrantedQuery)).toBe(input.granted + later);
    const second = await handle.describe();
    expect(second.runId).not.toBe(first.firstExecutionRunId);

    // Idle: the run waits 10 minutes for another request (1/200th of it here), then ends without continuing.
    await expect
      .poll(async () => (await handle.describe()).status.name, { timeout: 30_000, interval: 200 })
      .toBe('COMPLETED');
    const idle = (await env.client.workflow.getHandle(limiterId, second.runId).fetchHistory()).events!;
    expect(requestedWaits(idle).at(-1)).toBe(10 * 60_000);
    expect(idle.at(-1)?.workflowExecutionCompletedEventAttributes).toBeTruthy();
  }, 120_000);
});
