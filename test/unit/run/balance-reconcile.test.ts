/**
 * Issue 36, finding 9: a worker SIGKILLed right after a bulk answer left `unknown_calls: 1, credits: 0` while the
 * service had charged the answer. The balance every answer reports (`x-credits-remaining`) reconciles it.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconcileFromBalances } from '../../../activities/run/balance-reconcile.ts';
import { CallMarker, countUnsavedAnswers } from '../../../activities/run/unsaved-answers.ts';
import { openStore } from '../../../config/storage.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'signal-kit-balances-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A run's calls against an account of 1,000 credits; `dies` is the call whose worker died after it was charged. */
async function run(name: string, options: { retried?: boolean; balances?: boolean } = {}) {
  const store = openStore(pathToFileURL(join(dir, name)).href);
  const job = { jobId: 'job' };
  const saved = new Map<number, Set<string>>();
  const save = (batch: number, marker: CallMarker) =>
    saved.set(batch, new Set([...(saved.get(batch) ?? []), marker.id]));
  const balance = (value: number) => (options.balances === false ? undefined : value);
  const a = await CallMarker.begin(store, job, 0, 1, 10);
  await a.answered(10, balance(990));
  save(0, a);
  await sleep(5);
  // Batch 1, attempt 1: charged 20 (balance 970), its worker killed before it read the answer.
  await CallMarker.begin(store, job, 1, 1, 10);
  await sleep(5);
  const c = await CallMarker.begin(store, job, 2, 1, 10);
  await c.answered(5, balance(965));
  save(2, c);
  if (options.retried !== false) {
    await sleep(5);
    const b = await CallMarker.begin(store, job, 1, 2, 10);
    await b.answered(20, balance(945));
    save(1, b);
  }
  return countUnsavedAnswers(store, job, saved, { now: () => Date.now() + 3_600_000 });
}

describe('a killed worker’s spend, from the balances the service reported', () => {
  it('the call nobody read is counted at what the balances say it cost', async () => {
    const unsaved = await run('killed');
    expect(unsaved).toEqual({ credits: 20, unknownCalls: 0, fromBalances: { calls: 1, credits: 20 } });
  });

  it('without a later attempt of its batch the call cannot be placed: it stays of unknown cost', async () => {
    expect(await run('not-retried', { retried: false })).toEqual({ credits: 0, unknownCalls: 1 });
  });

  it('answers without a balance: nothing is reconciled', async () => {
    expect(await run('no-balances', { balances: false })).toEqual({ credits: 0, unknownCalls: 1 });
  });

  it('a balance that rose meanwhile (credits added) reconciles nothing', () => {
    const at = (ms: number) => new Date(1_700_000_000_000 + ms).toISOString();
    const call = (batch: number, attempt: number, start: number, credits: number, after: number) => ({
      batch,
      attempt,
      started_at: at(start),
      answered_at: at(start + 1),
      credits,
      reason: 'answered',
      balance_after: after,
    });
    const unknown = { batch: 1, attempt: 1, started_at: at(10), credits: null, reason: 'no answer saved' };
    expect(
      reconcileFromBalances({ answered: [call(0, 1, 0, 10, 990), call(1, 2, 20, 20, 5000)], unknown: [unknown] }),
    ).toBe(undefined);
  });
});
