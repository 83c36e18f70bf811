import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pushBatchKey } from '../../activities/push/layout.ts';
import type { PushBatch, PushResult } from '../../activities/push/types.ts';
import { planKey, watermarksKey } from '../../activities/run/scheduled-layout.ts';
import { openStore } from '../../config/storage.ts';
import type { Store } from '../../connectors/storage/index.ts';
import { type JobEnv, startJobEnv } from '../../testkit/job-env.ts';
import { readPushRun, runPush } from '../promises/push-helpers.ts';

const DAY = 86_400_000;

/** Reads a run's manifest and its manifested parts, as a consumer of the bucket would. */
async function readRun(store: Store, result: PushResult) {
  const run = await readPushRun(store, result);
  for (const part of run.manifest.parts) expect(part.key).toMatch(/\/part-\d{5}\.jsonl\.gz$/);
  return run;
}

async function readMarks(store: Store, name: string): Promise<{ run_id: string; domains: Record<string, string> }> {
  return JSON.parse(await store.readText(watermarksKey(name)));
}

describe('scheduled push: incremental runs over a sandbox whose clock moves forward', () => {
  let env: JobEnv;
  let dir: string;
  let now = Date.UTC(2026, 2, 1, 6);
  const domains = Array.from({ length: 40 }, (_, i) => `push-company${i}.com`);

  beforeAll(async () => {
    env = await startJobEnv({ sandbox: { seed: 11, clock: () => now } });
    await env.startWorker();
    dir = await mkdtemp(join(tmpdir(), 'signal-kit-push-'));
    const rows = [
      'name,domain',
      ...domains.map((d, i) => `Company ${i},https://www.${d}/`),
      'Dup,PUSH-COMPANY3.COM',
      'Junk,n/a',
    ];
    await writeFile(join(dir, 'watchlist.csv'), `${rows.join('\n')}\n`);
  });
  afterAll(async () => {
    await env?.stop();
  });

  it('the second run asks only for signals after each watermark, writes only those, and pays only for them', async () => {
    const output = pathToFileURL(join(dir, 'out')).href;
    const store = openStore(output);
    const push = { name: 'crm', watchlist: pathToFileURL(join(dir, 'watchlist.csv')).href, output };

    // Run 1 (no watermarks yet): every visible signal of every domain.
    const before1 = env.sandbox.ledger.total();
    const first = await runPush(env, 'push-crm-1', { ...push, runAt: '2026-03-01T06:00:00Z' });
    const charged1 = env.sandbox.ledger.total() - before1;
    expect(first).toMatchObject({ status: 'completed', runId: '20260301T060000Z', dt: '2026-03-01' });
    const run1 = await readRun(store, first);
    expect(run1.manifest.counts).toMatchObject({
      input_rows: 42,
      distinct: 40,
      duplicates: 1,
      invalid: 1,
      domains: 40,
    });
    expect(run1.lines.length).toBeGreaterThan(100);
    expect(run1.manifest.counts.signals).toBe(run1.lines.length);
    expect(charged1).toBe(2 * run1.lines.length);
    expect(first.credits).toBe(charged1);
    expect(new Set(run1.lines.map((l) => l.domain)).size).toBeGreaterThan(20);
    expect(run1.lines.every((l) => domains.includes(l.domain))).toBe(true);
    expect(run1.lines.every((l) => Date.parse(l.detected_at) <= now)).toBe(true);

    // Every domain's watermark is the newest signal of the bulk call that answered it (one call: one watermark),
    // committed after the manifest.
    const marks1 = await readMarks(store, 'crm');
    expect(marks1.run_id).toBe(first.runId);
    const newest = Math.max(...run1.lines.map((l) => Date.parse(l.detected_at)));
    const found = env.sandbox.truth.companySignals(domains).filter((t) => t.status !== 'invalid');
    expect(Object.keys(marks1.domains).sort()).toEqual(found.map((t) => t.domain).sort());
    for (const at of Object.values(marks1.domains)) expect(Date.parse(at)).toBe(newest);

    // The service's clock moves on: new signals appear.
    now += 45 * DAY;
    const before2 = env.sandbox.ledger.total();
    const mark2 = env.sandbox.truth.lastCall();
    const second = await runPush(env, 'push-crm-2', {
      ...push,
      runAt: '2026-04-15T06:00:00Z',
      batchesPerRun: 10,
      concurrency: 3,
    });
    const charged2 = env.sandbox.ledger.total() - before2;
    expect(second).toMatchObject({ status: 'completed', runId: '20260415T060000Z', dt: '2026-04-15' });
    const run2 = await readRun(store, second);

    // One bulk call for the 40 domains (ceil(40 / 100)), asking from their shared watermark.
    const calls2 = env.sandbox.truth.calls({ after: mark2, path: '/v1/companies/enrich/bulk' });
    expect(calls2).toHaveLength(1);
    expect(Date.parse(String(calls2[0]?.asked?.['detected_after']))).toBe(newest);
    const run2Ref = { name: 'crm', output, runId: second.runId, date: second.dt };
    const plan = JSON.parse(await store.readText(planKey(run2Ref))) as { batches: number; watermarksFrom: string };
    expect(plan).toMatchObject({ batches: 1, watermarksFrom: first.runId });
    const batch = JSON.parse(await store.readText(pushBatchKey(run2Ref, 0))) as PushBatch;
    expect(Date.parse(batch.detected_after ?? '')).toBe(newest);

    // Wrote exactly the signals detected since run 1's clock, none of them already pushed, and paid only for them.
    const window = { detected_after: Date.UTC(2026, 2, 1, 6) };
    const expected2 = env.sandbox.truth
      .companySignals(domains, window)
      .flatMap((t) => t.signals.map((s) => s.signal_id));
    expect(run2.lines.map((l) => l.signal_id).sort()).toEqual(expected2.sort());
    expect(charged2).toBe(2 * expected2.length);
    expect(second.credits).toBe(charged2);
    expect(run2.manifest.credits_charged).toBe(charged2);
    expect(run2.manifest.overlap).toEqual({ signals: 0, credits: 0 });

    // Nothing was missed: the two runs together are every signal the service shows now, each once.
    const all = env.sandbox.truth.companySignals(domains).flatMap((t) => t.signals.map((s) => s.signal_id));
    const pushed = [...run1.lines, ...run2.lines].map((l) => l.signal_id);
    expect(new Set(pushed).size).toBe(pushed.length);
    expect(pushed.sort()).toEqual(all.sort());

    const marks2 = await readMarks(store, 'crm');
    expect(marks2.run_id).toBe(second.runId);
    for (const l of run2.lines)
      expect(Date.parse(marks2.domains[l.domain]!)).toBeGreaterThanOrEqual(Date.parse(l.detected_at));

    // A retried run for the same scheduled time writes the same keys and fetches (and pays) nothing again.
    const entries3 = env.sandbox.ledger.entries.length;
    const again = await runPush(env, 'push-crm-2-retry', { ...push, runAt: '2026-04-15T06:00:00Z' });
    expect(env.sandbox.ledger.entries.length).toBe(entries3);
    expect(again).toMatchObject({
      runId: second.runId,
      signals: second.signals,
      credits: second.credits,
      watermarksAdvanced: 0,
    });
    expect((await readRun(store, again)).manifest.parts).toEqual(run2.manifest.parts);
  });
});
