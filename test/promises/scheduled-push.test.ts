import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../config/storage.ts';
import { removeTempDirs, tempDir } from '../../testkit/drill-input.ts';
import { type JobEnv, startJobEnv } from '../../testkit/job-env.ts';
import { allowedCalls, callsTo, chargedSince, newSignals, PATHS } from './oracle.ts';
import { DAY, FIRST_RUN_AT, readPushRun, runPush, sorted, writeWatchlist } from './push-helpers.ts';

const LIMIT = 6;

describe('scheduled push keeps its promises over three runs with the clock moving (S3 output)', () => {
  let env: JobEnv;
  let now = FIRST_RUN_AT;
  const domains = Array.from({ length: 250 }, (_, i) => `promise-co${i}.com`);
  let watchlist: string;

  beforeAll(async () => {
    env = await startJobEnv({ s3: true, sandbox: { seed: 23, clock: () => now } });
    await env.startWorker();
    await env.createBuckets('push-promise');
    const dir = await tempDir('push-promise');
    const rows = ['domain', ...domains, 'PROMISE-CO7.COM', 'https://www.promise-co8.com/about', 'not a domain'];
    watchlist = await writeWatchlist(dir, rows);
  });
  afterAll(async () => {
    await env?.stop();
    await removeTempDirs();
  });

  /** Truth: the newest signal of `domain` detected in (since, clock], as epoch ms. */
  const newestPushed = (domain: string, since: string, clock: number): number | undefined => {
    const [t] = env.sandbox.truth.companySignals([domain], { detected_after: since, detected_before: clock + 1 });
    const newest = t?.signals[0]?.detected_at;
    return newest === undefined ? undefined : Date.parse(newest);
  };

  /** The most signals the catch-up of `over` may re-read, from the truth of what runs up to `clock` pushed. */
  const rereadAllowance = (over: string[], since: string, clock: number): number => {
    if (over.length === 0) return 0;
    // A domain that never had a signal pushed has a watermark no truth bounds but `since`.
    const lowest = Math.min(...over.map((d) => newestPushed(d, since, clock) ?? Date.parse(since)));
    return over.reduce(
      (sum, d) => sum + newSignals(env.sandbox, [d], { detected_after: lowest, detected_before: clock + 1 }).ids.length,
      0,
    );
  };

  it('writes each new signal once, pays 2 per new signal plus the reported overlap, in ceil(domains / 100) calls', async () => {
    const output = 's3://push-promise/out';
    const store = openStore(output);
    const since = new Date(now - 45 * DAY).toISOString();
    const push = { name: 'nightly', watchlist, output, since, limit: LIMIT };
    const pushed = new Set<string>();
    const overLimitSeen: number[] = [];

    // Run 3's clock also brings 600 signals at one instant to one domain: more than the 500 one call returns.
    const flooded = 'promise-co3.com';
    const runs = [
      { at: now, after: since as string | number },
      { at: now + 30 * DAY, after: now },
      { at: now + 37 * DAY, after: now + 30 * DAY, flood: 600 },
    ];
    for (const [i, step] of runs.entries()) {
      now = step.at;
      if (step.flood) env.sandbox.emitSignals({ count: step.flood, domain: flooded });
      const truth = newSignals(env.sandbox, domains, { detected_after: step.after });
      const overLimit = [...truth.perDomain.values()].filter((count) => count > LIMIT).length;
      overLimitSeen.push(overLimit);
      const mark = env.sandbox.truth.lastCall();
      // Catch-up calls pack the domains over the limit into full calls from the oldest of their watermarks: each
      // re-reads its signals between that and its own watermark (already pushed, dropped, reported). The allowance
      // comes from the sandbox's truth, not the kit's state: a domain's watermark is at least the newest signal it
      // already had pushed and at most the last run's clock, so the catch-up re-reads, per domain, only signals it
      // had pushed after the lowest of those newest signals.
      const over = [...truth.perDomain].filter(([, count]) => count > LIMIT).map(([domain]) => domain);
      const shared = i === 0 ? 0 : rereadAllowance(over, since, runs[i - 1]!.at);
      const result = await runPush(env, `promise-push-${i}`, { ...push, runAt: new Date(now).toISOString() });
      const { manifest, lines } = await readPushRun(store, result);
      const calls = callsTo(env.sandbox, PATHS.enrichBulk, mark).length;
      const charged = chargedSince(env.sandbox, mark);

      // The flooded domain has more new signals than one call returns (500, newest first): it is asked once per
      // signal type it has, and every one of them is written.
      const written = lines.map((l) => l.signal_id);
      expect(new Set(written).size).toBe(written.length);
      for (const id of written) expect(pushed.has(id)).toBe(false);
      for (const id of written) pushed.add(id);
      expect(sorted(written)).toEqual(sorted(truth.ids));
      expect(result.status).toBe('completed');
      expect(manifest.incomplete_domains).toEqual([]);
      const expected = truth.ids.length;
      // Its type-by-type calls: one per signal type it has ever had, each returning what was already received too.
      const floodTypes = step.flood
        ? new Set(env.sandbox.truth.companySignals([flooded])[0]!.signals.map((x) => x.signal_type)).size
        : 0;
      if (step.flood) expect(lines.filter((l) => l.domain === flooded)).toHaveLength(truth.perDomain.get(flooded)!);

      // Credits: 2 per signal written, plus the overlap the run reports: a domain over the limit is asked again
      // with 500 and pays again for the `limit` signals its first call returned, plus what its catch-up call
      // re-reads below its own watermark; a domain over 500 pays again for the 500 in its type-by-type calls.
      // The first-round calls re-read nothing (one watermark per call).
      const narrowed = step.flood ? 500 : 0;
      expect(manifest.overlap.signals).toBeGreaterThanOrEqual(LIMIT * overLimit + narrowed);
      expect(manifest.overlap.signals).toBeLessThanOrEqual(LIMIT * overLimit + shared + narrowed);
      expect(manifest.overlap.credits).toBe(2 * manifest.overlap.signals);
      expect(charged).toBe(2 * expected + manifest.overlap.credits);
      expect(manifest.credits_charged).toBe(charged);
      expect(result).toMatchObject({ credits: charged, overlapCredits: manifest.overlap.credits, calls });

      // Calls: ceil(250 / 100) = 3 on every run, plus the catch-up calls for the domains over the limit, plus one
      // per signal type for the domain over 500.
      expect(calls).toBeLessThanOrEqual(allowedCalls(truth.valid, overLimit) + floodTypes);
      expect(manifest.calls).toEqual({
        total: calls,
        first_round: Math.ceil(truth.valid / 100),
        catch_up: Math.ceil(overLimit / 100) + floodTypes,
      });
    }
    // The scenario covered what it claims: domains over the limit on every run.
    expect(overLimitSeen, `domains over the limit per run: ${overLimitSeen}`).not.toContain(0);

    // Across the three runs: every signal the service shows for the watchlist in (since, clock], once.
    const all = newSignals(env.sandbox, domains, { detected_after: since });
    expect(sorted(pushed)).toEqual(sorted(all.ids));
  });
});
