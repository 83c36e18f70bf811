/**
 * A worker's side of the account rate limiter (workers/rate-limiter-permits.ts) against a stand-in for the Temporal client:
 * a slot that reaches the caller too late is given up and another asked for; a limiter that does not answer fails the
 * waiting call after 5 attempts (the activity is then retried by Temporal), naming the limiter; a limiter not running
 * is started and asked again.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { WorkflowNotFoundError } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import { RateLimiterPermits, RESERVE_ATTEMPTS } from '../../../workers/rate-limiter-permits.ts';
import { SEND_LATENESS_MS, type SlotGrant } from '../../../workflows/rate-limiter-schedule.ts';

/** A Temporal client whose limiter answers each request for slots with the next of `answers`. */
function standIn(answers: Array<(count: number) => SlotGrant | Error>) {
  const asked: number[] = [];
  let starts = 0;
  let i = 0;
  const client = {
    options: { namespace: 'default' },
    withDeadline: <R>(_deadline: number, fn: () => Promise<R>) => fn(),
    workflow: {
      getHandle: () => ({
        executeUpdate: async (_update: unknown, { args }: { args: [{ count: number }] }) => {
          asked.push(args[0].count);
          const answer = (answers[Math.min(i++, answers.length - 1)] as (count: number) => SlotGrant | Error)(
            args[0].count,
          );
          if (answer instanceof Error) throw answer;
          return answer;
        },
        describe: async () => ({ status: { name: 'RUNNING' }, raw: { workflowExecutionInfo: {} } }),
      }),
      start: async () => {
        starts++;
      },
    },
    workflowService: {
      describeTaskQueue: async () => ({ pollers: [{ identity: 'a worker' }] }),
      updateWorkflowExecutionOptions: async () => ({}),
    },
  };
  const permits = new RateLimiterPermits({
    client: client as never,
    taskQueue: 'main',
    apiTaskQueue: 'api',
    perMinute: 600,
  });
  return { permits, asked, starts: () => starts };
}

describe('RateLimiterPermits', () => {
  it('gives up a slot that reaches it too late and asks for another', async () => {
    const { permits, asked } = standIn([
      // Granted 5 s ago: stale by the time it arrives.
      () => ({ waitsMs: [0], grantedAt: Date.now() - 5_000 }),
      () => ({ waitsMs: [20], grantedAt: Date.now() }),
    ]);
    const started = Date.now();
    await permits.acquire();
    expect(asked).toEqual([1, 1]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(15);
  });

  it('says a call held past its slot for longer than the lateness allowed may no longer leave', async () => {
    const { permits } = standIn([() => ({ waitsMs: [0], grantedAt: Date.now() })]);
    const onTime = await permits.acquire();
    // Held (its marker written to a slow store) past its slot by more than SEND_LATENESS_MS.
    await sleep(SEND_LATENESS_MS + 50);
    expect(onTime()).toBe(false);
  });

  it('fails the waiting call after 5 unanswered attempts, naming the limiter', async () => {
    const { permits, asked } = standIn([() => new Error('update timed out')]);
    await expect(permits.acquire()).rejects.toThrow(
      /rate limiter \(workflow signal-kit-rate-limiter\/api\) does not answer: update timed out/,
    );
    expect(RESERVE_ATTEMPTS).toBe(5);
    expect(asked).toHaveLength(5);
  }, 15_000);

  it('starts the limiter when none runs, and gives up after 5 attempts if it never appears', async () => {
    const gone = () => new WorkflowNotFoundError('not found', 'signal-kit-rate-limiter/api', undefined);
    const once = standIn([gone, () => ({ waitsMs: [0], grantedAt: Date.now() })]);
    await once.permits.acquire();
    expect(once.starts()).toBe(1);
    expect(once.asked).toEqual([1, 1]);

    const never = standIn([gone]);
    await expect(never.permits.acquire()).rejects.toBeInstanceOf(WorkflowNotFoundError);
    expect(never.asked).toHaveLength(5);
    expect(never.starts()).toBe(4);
  });
});
