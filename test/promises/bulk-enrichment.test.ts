/**
 * Promise: a bulk enrichment through a service that fails the way real ones do (5xx, 429 bursts, resets, cut-off
 * JSON) accounts for every distinct input once, writes every signal that exists for it exactly once, pays what the
 * spec charges for those signals (2 credits each, the newest `limit` per distinct domain) and not a credit more, and
 * makes one answered bulk call per 100 distinct domains: every other call is one the service refused or failed.
 * Checked against the sandbox's truth and its call record, on file:// and s3:// outputs.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SANDBOX_EPOCH_MS } from '../../sandbox/index.ts';
import { removeTempDirs, tempDir } from '../../testkit/drill-input.ts';
import { type JobEnv, startJobEnv } from '../../testkit/job-env.ts';
import type { BulkEnrichInput } from '../../workflows/bulk-enrich.ts';
import { readJobOutput } from '../helpers/output.ts';
import { runJob } from './helpers.ts';
import { callsTo, chargedSince, enrichIdeal, PATHS } from './oracle.ts';

const CLOCK = SANDBOX_EPOCH_MS + 200 * 86_400_000;
const FAULTS = {
  errorRate: 0.15,
  rateLimitBurst: { every: 10, length: 2, retryAfterS: 1 },
  resetRate: 0.05,
  malformedJsonRate: 0.05,
};

describe('bulk enrichment with faults on, against the truth', () => {
  let env: JobEnv;
  let dir: string;
  let inputUrl: string;
  /** 1,230 distinct companies, 80 of them again in other spellings, and two junk rows. */
  const distinct = Array.from({ length: 1_230 }, (_, i) => `promise-co${i}.com`);
  const rows = [
    ...distinct,
    ...distinct.slice(0, 80).map((d, i) => (i % 2 ? `https://www.${d}/about` : d.toUpperCase())),
    'not a domain',
    '',
  ];

  beforeAll(async () => {
    env = await startJobEnv({ s3: true, sandbox: { seed: 23, clock: () => CLOCK } });
    await env.createBuckets('promises');
    await env.startWorker();
    dir = await tempDir('promise-enrich');
    await writeFile(join(dir, 'crm.csv'), `website\n${rows.map((r) => `"${r}"`).join('\n')}\n`);
    inputUrl = pathToFileURL(join(dir, 'crm.csv')).href;
  });
  afterAll(async () => {
    await env?.stop();
    await removeTempDirs();
  });

  it.each([
    ['file://', () => pathToFileURL(join(dir, 'out')).href],
    ['s3://', () => 's3://promises/enrich'],
  ])(
    'on %s: every input once, every signal once, the spec price, one answered call per 100',
    async (_scheme, out) => {
      const output = out();
      const limit = 5;
      const ideal = enrichIdeal(env.sandbox, distinct, { limit });
      const jobId = `faults-${_scheme.replace(/\W/g, '')}`;
      const mark = env.sandbox.truth.lastCall();
      env.sandbox.setFaults(FAULTS);
      let result: Awaited<ReturnType<typeof runJob>>;
      try {
        result = await runJob<BulkEnrichInput>(env, 'bulkEnrich', {
          jobId,
          input: inputUrl,
          output,
          options: { limit },
        });
      } finally {
        env.sandbox.setFaults({});
      }
      expect(result.status).toBe('completed');
      const { manifest, lines } = await readJobOutput(output, jobId);

      // Every distinct input once, with the service's answer for it; the junk rows as invalid lines.
      const answered = lines.filter((line) => !['invalid', 'duplicate'].includes(String(line['status'])));
      expect(answered.map((line) => line['domain']).sort()).toEqual(ideal.domains.map((d) => d.domain).sort());
      expect(lines.filter((line) => line['status'] === 'invalid')).toHaveLength(2);
      const truthStatus = new Map(ideal.domains.map((d) => [d.domain, d.status]));
      for (const line of answered) expect(line['status']).toBe(truthStatus.get(String(line['domain'])));

      // Every signal that exists (the newest `limit` per domain) written exactly once.
      const written = answered.flatMap((line) =>
        ((line['signals'] as { signal_id: string }[] | undefined) ?? []).map((s) => `${line['domain']}/${s.signal_id}`),
      );
      const expected = [...ideal.signalIds].flatMap(([domain, ids]) => ids.map((id) => `${domain}/${id}`));
      expect(new Set(written).size).toBe(written.length);
      expect(written.sort()).toEqual(expected.sort());

      // The spec's price, the same in the manifest and on the ledger.
      expect(chargedSince(env.sandbox, mark)).toBe(ideal.credits);
      expect(manifest.credits_charged).toBe(ideal.credits);

      // One answered call per batch of 100; every other call was one the service failed or refused (never re-sent
      // after an answer).
      const calls = callsTo(env.sandbox, PATHS.enrichBulk, mark);
      const good = calls.filter((c) => c.status === 200 && c.fault === null);
      const faulted = calls.filter((c) => c.fault !== null || c.status !== 200);
      expect(faulted.length).toBeGreaterThan(0);
      expect(good).toHaveLength(ideal.calls);
      expect(calls).toHaveLength(ideal.calls + faulted.length);
    },
    180_000,
  );
});
