/** A follower of a job rides out a Temporal outage for a bounded time, then gives up with exit 2 (a config error). */

import { describe, expect, it } from 'vitest';
import { ConfigError, TemporalOutageError } from '../../../connectors/errors.ts';
import { throughOutage } from '../../../library/temporal-outage.ts';

/** What the Temporal client throws when a call fails: its wrapper, with gRPC's error (code, details) as the cause. */
function clientError(code: number): Error {
  const grpc = Object.assign(new Error(`${code} grpc failure`), { code, details: 'tcp connect error', metadata: {} });
  return new Error('Failed to get Workflow execution history', { cause: grpc });
}
const UNAVAILABLE = 14;
const NOT_FOUND = 5;

describe('following a job across a Temporal outage', () => {
  it('retries until the server answers again, saying so once, and returns what the call returns', async () => {
    const notices: string[] = [];
    let probes = 0;
    let calls = 0;
    const value = await throughOutage(
      'job-1',
      async () => {
        calls++;
        if (calls === 1) throw clientError(UNAVAILABLE);
        return 'done';
      },
      {
        notice: (m) => notices.push(m),
        back: async () => {
          probes++;
          if (probes < 3) throw clientError(UNAVAILABLE);
        },
        limitMs: 10_000,
      },
    );
    expect(value).toBe('done');
    expect(probes).toBe(3);
    expect(notices).toHaveLength(1);
    expect(notices[0]).toMatch(/Temporal is unreachable; retrying/);
  });

  it('past the bound of continuous outage: a clear error naming the job, which the CLI exits 2 with', async () => {
    const notices: string[] = [];
    const started = Date.now();
    const failure = await throughOutage('job-2', () => Promise.reject(clientError(UNAVAILABLE)), {
      notice: (m) => notices.push(m),
      limitMs: 1_500,
    }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(TemporalOutageError);
    expect(failure).toBeInstanceOf(ConfigError);
    expect((failure as Error).message).toMatch(/unreachable for \d+ s while following job-2/);
    expect((failure as Error).message).toContain('signal-kit status job-2');
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_500);
    expect(notices).toHaveLength(1);
  });

  it('an answer that is not an outage (the job does not exist) is thrown at once, without retrying', async () => {
    const notices: string[] = [];
    let calls = 0;
    const failure = await throughOutage(
      'job-3',
      () => {
        calls++;
        return Promise.reject(clientError(NOT_FOUND));
      },
      { notice: (m) => notices.push(m) },
    ).catch((error: unknown) => error);
    expect((failure as Error).message).toBe('Failed to get Workflow execution history');
    expect(calls).toBe(1);
    expect(notices).toEqual([]);
  });
});
