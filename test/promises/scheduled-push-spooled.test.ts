/**
 * Promise: a scheduled push whose output refuses a paid answer for good (a full disk) stops before its next bulk call,
 * and its run's manifest counts the answer it could not save; the answer waits in the worker's spool, and running the
 * same run again once the output takes writes publishes it (lines and flat table) before any call, so each batch is
 * paid once in all. Calls and credits are the sandbox's (its call record and ledger), never the kit's own counts.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PushManifest, PushResult } from '../../activities/push/types.ts';
import { openStore } from '../../config/storage.ts';
import { removeTempDirs, tempDir } from '../../testkit/drill-input.ts';
import { type JobEnv, startJobEnv } from '../../testkit/job-env.ts';
import type { WorkerHandle } from '../../workers/worker.ts';
import { runIdOf } from '../../workflows/push-ids.ts';
import { startRefusingWorker } from '../helpers/refusing-store.ts';
import { rejectionOf } from '../helpers/workflow-failure.ts';
import { readCsv, runSync, writeExport } from './crm-sync-helpers.ts';
import { BULK_DOMAINS, callsTo, chargedSince, newSignals, PATHS } from './oracle.ts';
import { DAY, FIRST_RUN_AT, readPushRun, runPush, sorted, writeWatchlist } from './push-helpers.ts';

/**
 * A push run's answers: its lines parts and its flat tables' parts (its manifest and work/ are still written); a
 * night of the CRM sync's: its saved answers.
 */
const isAnswerKey = (key: string) =>
  /\/signals\/dt=[^/]+\/run-[^/]+\/(tables\/signals\/)?part-/.test(key) ||
  /\/work\/run-[^/]+\/answer-\d+\.json$/.test(key);

describe('promise: a push (or CRM sync) answer the output refused is not paid for again', () => {
  let env: JobEnv;
  let worker: WorkerHandle | undefined;
  let refusing = false;
  const now = FIRST_RUN_AT;

  beforeAll(async () => {
    env = await startJobEnv({ sandbox: { seed: 53, clock: () => now } });
    worker = await startRefusingWorker(env, 'push-spool', isAnswerKey, () => refusing);
  });
  afterAll(async () => {
    await worker?.shutdown();
    await env?.stop();
    await removeTempDirs();
  });

  /**
   * A watchlist of one and a half bulk calls (a second batch is left to pay for after the first one's answer is
   * refused), its output, and the signals the sandbox holds for it since 30 days before the runs.
   */
  async function watchedDomains(prefix: string) {
    const dir = await tempDir(`push-${prefix}`);
    const domains = Array.from({ length: BULK_DOMAINS + BULK_DOMAINS / 2 }, (_, i) => `${prefix}-co${i}.com`);
    const since = new Date(now - 30 * DAY).toISOString();
    const truth = newSignals(env.sandbox, domains, { detected_after: since });
    expect(truth.ids.length).toBeGreaterThan(0);
    return {
      watchlist: await writeWatchlist(dir, ['domain', ...domains]),
      output: pathToFileURL(join(dir, 'out')).href,
      since,
      truth,
    };
  }

  it('stops before the next call, reports the refused answer, and the re-run publishes it without paying again', async () => {
    const { watchlist, output, since, truth } = await watchedDomains('spooled');
    const runAt = new Date(now).toISOString();
    const calls = Math.ceil(truth.valid / BULK_DOMAINS);
    expect(calls).toBe(2);
    // One batch at a time, so that "the next paid call" is the second batch's.
    const input = { name: 'spooled', watchlist, output, since, runAt, concurrency: 1, formats: ['csv' as const] };
    const store = openStore(output);
    const mark = env.sandbox.truth.lastCall();

    refusing = true;
    const failure = await rejectionOf(runPush(env, 'spooled-push', input));
    refusing = false;
    expect(String((failure as { cause?: unknown } | undefined)?.cause)).toMatch(/refused \(ENOSPC\)/);
    // Stopped before the next paid call: the first batch's call and none after it.
    expect(callsTo(env.sandbox, PATHS.enrichBulk, mark)).toHaveLength(1);
    expect(env.sandbox.truth.calls({ after: mark })).toHaveLength(1);
    // The failed run's manifest says what was charged for an answer it could not save.
    const firstKey = `spooled/signals/dt=${runAt.slice(0, 10)}/run-${runIdOf(runAt)}/_manifest.json`;
    const first = JSON.parse(await store.readText(firstKey)) as PushManifest;
    expect(first.status).toBe('failed');
    expect(chargedSince(env.sandbox, mark)).toBeGreaterThan(0);
    expect(first.credits_charged).toBe(chargedSince(env.sandbox, mark));
    expect(first.unsaved_answers).toEqual({ credits: chargedSince(env.sandbox, mark), unknown_calls: 0 });

    const result = (await runPush(env, 'spooled-push', input)) as PushResult;
    expect(result.status).toBe('completed');
    const { manifest, lines } = await readPushRun(store, result);
    const written = lines.map((line) => line.signal_id);
    expect(sorted(written)).toEqual(sorted(truth.ids));
    // Each batch paid once in all: the first batch's answer was published from the spool, with its flat table.
    expect(callsTo(env.sandbox, PATHS.enrichBulk, mark)).toHaveLength(calls);
    expect(env.sandbox.truth.calls({ after: mark })).toHaveLength(calls);
    expect(chargedSince(env.sandbox, mark)).toBe(2 * truth.ids.length);
    expect(manifest.credits_charged).toBe(chargedSince(env.sandbox, mark));
    expect(manifest.unsaved_answers).toEqual({ credits: 0, unknown_calls: 0 });
    const tables = manifest.parts.filter((part) => part.table === 'signals');
    expect(tables.map((part) => part.lines).reduce((a, b) => a + b, 0)).toBe(truth.ids.length);
    expect(tables).toHaveLength(manifest.parts.filter((part) => part.table === 'lines').length);
  });

  it('the next run, under its own id, first finishes the stopped run with the kept answer and pays for it once', async () => {
    const { watchlist, output, since, truth } = await watchedDomains('kept');
    const push = { name: 'kept', watchlist, output, since, concurrency: 1 };
    const store = openStore(output);
    const mark = env.sandbox.truth.lastCall();

    refusing = true;
    const stoppedAt = new Date(now).toISOString();
    await rejectionOf(runPush(env, 'kept-push-1', { ...push, runAt: stoppedAt }));
    refusing = false;
    const [refusedCall, ...others] = env.sandbox.truth.calls({ after: mark });
    expect(others).toEqual([]);
    expect(refusedCall?.credits).toBeGreaterThan(0);

    // The next run, an hour later (the sandbox's clock has not moved: no signal is new since the first run).
    const next = (await runPush(env, 'kept-push-2', {
      ...push,
      runAt: new Date(now + 3_600_000).toISOString(),
    })) as PushResult;
    expect(next.status).toBe('completed');
    const stopped = { name: 'kept', dt: stoppedAt.slice(0, 10), runId: runIdOf(stoppedAt) } as PushResult;
    const first = await readPushRun(store, stopped);
    const second = await readPushRun(store, next);
    // Every signal written once, across the two runs: the kept answer in the first run's folder, the rest in the next.
    const written = [...first.lines, ...second.lines].map((line) => line.signal_id);
    expect(sorted(written)).toEqual(sorted(truth.ids));
    expect(first.lines.length).toBeGreaterThan(0);
    // Each signal paid once in all (the sandbox's ledger); each run's manifest says what it was charged.
    expect(chargedSince(env.sandbox, mark)).toBe(2 * truth.ids.length);
    expect(first.manifest.status).toBe('failed');
    expect(first.manifest.credits_charged).toBe(refusedCall?.credits);
    expect(first.manifest.unsaved_answers).toEqual({ credits: 0, unknown_calls: 0 });
    expect(second.manifest.credits_charged).toBe(chargedSince(env.sandbox, refusedCall?.seq));
    expect(second.manifest.unsaved_answers).toEqual({ credits: 0, unknown_calls: 0 });
  });

  it('a night of the CRM sync: fails, keeps the answer, and the next night takes it in first: each company paid once', async () => {
    const limit = 5;
    const dir = await tempDir('crm-sync-spooled');
    const records = Array.from({ length: 150 }, (_, i) => ({
      id: `sp-${i}`,
      website: `spool-co${i}.com`,
      industry: 'x',
    }));
    const input = await writeExport(dir, records);
    const output = pathToFileURL(join(dir, 'out')).href;
    const night = { name: 'spooled', kind: 'enrich' as const, input, output, limit, concurrency: 1 };
    const mark = env.sandbox.truth.lastCall();

    refusing = true;
    const failure = await rejectionOf(
      runSync(env, 'crm-sync-spooled-0', { ...night, runAt: new Date(now).toISOString() }),
    );
    refusing = false;
    expect(String((failure as { cause?: unknown } | undefined)?.cause)).toMatch(/refused \(ENOSPC\)/);
    // Stopped before the next paid call: the first batch's call and none after it.
    expect(callsTo(env.sandbox, PATHS.enrichBulk, mark)).toHaveLength(1);

    // The next night, at the same sandbox clock: the two nights together pay each company's answer once.
    const next = await runSync(env, 'crm-sync-spooled-1', { ...night, runAt: new Date(now + 60_000).toISOString() });
    expect(next.status).toBe('completed');
    const truth = env.sandbox.truth.companySignals(records.map((r) => r.website));
    expect(chargedSince(env.sandbox, mark)).toBe(
      truth.reduce((sum, t) => sum + 2 * t.signals.slice(0, limit).length, 0),
    );
    const rows = await readCsv(openStore(output), next.rowsUrl);
    expect(rows.map((r) => r['record_id']).sort()).toEqual(records.map((r) => r.id).sort());
    expect(rows.filter((r) => r['status'] === 'error')).toEqual([]);
  });
});
