/**
 * crm-sync-nightly: a CRM export of 10,000 accounts through two nights of the CRM sync (`crmSync`), with about 2 % of
 * the companies getting something new between them. Night 2's credits and bulk calls against the ideal (2 × the new
 * signals the sandbox's truth shows, each company capped by the limit; ceil(companies / 100) calls) and against a
 * full re-enrichment of the same export (every company's answer again, priced from the truth), in one run.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { SyncResult } from '../activities/sync/types.ts';
import { writeExport } from '../testkit/crm-export.ts';
import type { CrmSyncInput } from '../workflows/crm-sync.ts';
import { logger, startBenchEnv } from './lib/env.ts';
import { num, secs } from './lib/format.ts';
import { machine } from './lib/machine.ts';
import type { Benchmark, BenchResult, RunOptions, Size } from './lib/types.ts';

export const SIZES = {
  full: { accounts: 10_000, newShare: 0.02 },
  smoke: { accounts: 500, newShare: 0.02 },
} as const;

const LIMIT = 20;
const BULK = 100;
const ENRICH_BULK = '/v1/companies/enrich/bulk';

const NOTES = [
  'The ideal is priced from the sandbox truth: 2 credits per signal detected since the company was last asked, at most the limit per company; a full re-enrichment asks every company again for its newest signals up to the limit (what enrich, or a vendor that re-charges the full answer, pays each night).',
  'Night 1 is every company’s full answer; night 2 asks every company for what is new since night 1, in full calls of 100 (one start for all: the time night 1 ran), so zero-result calls cost nothing.',
];

interface Night {
  night: number;
  calls: number;
  idealCalls: number;
  credits: number;
  idealCredits: number;
  fullCredits: number;
  status: string;
  changes: number;
  wallMs: number;
}

export async function run(size: Size, options: RunOptions = {}): Promise<BenchResult> {
  const startedAt = new Date();
  const { accounts, newShare } = SIZES[size];
  const log = logger('crm-sync-nightly', options.log);
  let now = Date.UTC(2026, 2, 1, 2);
  const bench = await startBenchEnv({ sandbox: { seed: 131, clock: () => now } });
  const env = bench.env;
  try {
    await env.startWorker();
    const records = Array.from({ length: accounts }, (_, i) => ({
      id: `001N${String(i).padStart(6, '0')}`,
      website: `nightly-${i}.example-co.com`,
      industry: 'Software',
    }));
    const input = await writeExport(bench.dir, records);
    const output = pathToFileURL(join(bench.dir, 'out')).href;
    const config = env.config();
    const night: CrmSyncInput = {
      name: 'bench',
      kind: 'enrich',
      input,
      output,
      limit: LIMIT,
      concurrency: 16,
      taskQueue: config.taskQueue,
      apiTaskQueue: config.apiTaskQueue,
    };
    const domains = records.map((r) => r.website);
    const idealCalls = Math.ceil(
      env.sandbox.truth.companySignals(domains).filter((t) => t.status !== 'invalid').length / BULK,
    );
    const nights: Night[] = [];
    let previous: number | undefined;
    for (let n = 1; n <= 2; n++) {
      if (n === 2) {
        // A night later for the CRM, a few minutes for the sandbox's own timeline; about 2 % of the companies get news.
        now += 5 * 60_000;
        const step = Math.round(1 / newShare);
        const known = env.sandbox.truth.companySignals(domains).filter((t) => t.status === 'ok');
        for (let i = 0; i < known.length; i += step)
          env.sandbox.emitSignals({ count: 1 + (i % 3), domain: known[i]!.domain });
      }
      const since = previous === undefined ? {} : { detected_after: previous };
      const truth = env.sandbox.truth.companySignals(domains, since);
      const idealCredits = truth.reduce((sum, t) => sum + 2 * t.signals.slice(0, LIMIT).length, 0);
      const full = env.sandbox.truth.companySignals(domains);
      const fullCredits = full.reduce((sum, t) => sum + 2 * t.signals.slice(0, LIMIT).length, 0);
      const mark = env.sandbox.truth.lastCall();
      log(`night ${n}: ${accounts} accounts, ideal ${idealCredits} credits`);
      const started = performance.now();
      const result = (await env.client.workflow.execute('crmSync', {
        workflowId: `bench-crm-sync-${n}-${Date.now()}`,
        taskQueue: config.taskQueue,
        args: [{ ...night, runAt: new Date(now).toISOString() }],
      })) as SyncResult;
      const wallMs = performance.now() - started;
      nights.push({
        night: n,
        calls: env.sandbox.truth.calls({ after: mark, path: ENRICH_BULK }).length,
        idealCalls,
        credits: env.sandbox.truth.calls({ after: mark }).reduce((sum, c) => sum + c.credits, 0),
        idealCredits,
        fullCredits,
        changes: result.records.new + result.records.changed,
        wallMs,
        status: result.status,
      });
      previous = now;
    }
    const second = nights[1]!;
    const checks = {
      'every night completed': nights.every((f) => f.status === 'completed'),
      'credits = the ideal every night': nights.every((f) => f.credits === f.idealCredits),
      'night 2 in ceil(companies/100) calls': second.calls === second.idealCalls,
      'night 2 cheaper than a full re-enrichment': second.credits < second.fullCredits,
    };
    const rows = nights.map((f) => [
      `night ${f.night}`,
      `${f.calls} / ${f.idealCalls}`,
      `${num(f.credits)} / ${num(f.idealCredits)}`,
      `${num(f.fullCredits)} (${num(f.fullCredits / Math.max(1, f.credits), 1)}× this night)`,
      num(f.changes),
      secs(f.wallMs),
    ]);
    return {
      name: 'crm-sync-nightly',
      size,
      title: `crm-sync-nightly: a ${accounts.toLocaleString('en-US')}-account CRM export through two nights of the CRM sync (limit ${LIMIT}), about ${newShare * 100} % of the companies with news on night 2; in-process worker, sandbox without rate limit, file output.`,
      startedAt: startedAt.toISOString(),
      durationS: (Date.now() - startedAt.getTime()) / 1000,
      table: {
        columns: [
          'night',
          'bulk calls / ideal ceil(companies/100)',
          'credits charged / ideal (truth)',
          'a full re-enrichment would cost',
          'rows in changes.csv',
          'wall time',
        ],
        rows,
      },
      metrics: { machine: machine(), accounts, limit: LIMIT, nights },
      checks,
      notes: NOTES,
    };
  } finally {
    await bench.stop();
  }
}

const description = 'nightly CRM sync: night 2 credits and calls vs the ideal and vs a full re-enrichment';
export const benchmark: Benchmark = { name: 'crm-sync-nightly', description, run };
