import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SANDBOX_EPOCH_MS } from '../../sandbox/index.ts';
import { type JobEnv, startJobEnv } from '../../testkit/job-env.ts';
import type { BulkEnrichInput } from '../../workflows/bulk-enrich.ts';
import type { IntentExportInput } from '../../workflows/intent-export.ts';
import type { VerifyEmailsInput } from '../../workflows/verify-emails.ts';
import { readJobOutput } from '../helpers/output.ts';
import { runJob } from '../promises/helpers.ts';
import {
  callsTo,
  chargedSince,
  type EnrichIdeal,
  enrichIdeal,
  exportIdeal,
  PATHS,
  verifyIdeal,
} from '../promises/oracle.ts';

/**
 * A messy CRM export: 230 distinct companies written in several forms, duplicates, blanks and junk. Its rows have ids
 * but no company name (a `note`), so that a row without a usable website is invalid rather than enriched by name.
 */
function messyCrm(): { csv: string; distinct: number; invalid: number; duplicates: number; rows: number } {
  const rows: string[] = ['id,note,website'];
  for (let i = 0; i < 230; i++) rows.push(`${i},Company ${i},company${i}.com`);
  const forms = (i: number) => [`https://www.company${i}.com/pricing`, `HTTP://Company${i}.COM`, ` company${i}.com. `];
  for (let i = 0; i < 60; i++) rows.push(`d${i},Dup ${i},"${forms(i)[i % 3]}"`);
  const junk = ['', 'n/a', 'not a website', 'http://', '???', '10.0.0.1', 'foo@'];
  for (const [i, value] of junk.entries()) rows.push(`j${i},Junk ${i},"${value}"`);
  return { csv: `${rows.join('\n')}\n`, distinct: 230, invalid: junk.length, duplicates: 60, rows: rows.length - 1 };
}

const CLOCK = SANDBOX_EPOCH_MS + 120 * 86_400_000;
/** The distinct companies of messyCrm(), as the service compares them. */
const CRM_DOMAINS = Array.from({ length: 230 }, (_, i) => `company${i}.com`);

/** Holds every domain's line to the sandbox's truth: `ok` lines carry exactly the newest `limit` signals. */
function expectTruth(lines: Record<string, unknown>[], ideal: EnrichIdeal): void {
  for (const line of lines) {
    if (line['status'] === 'invalid' || line['status'] === 'duplicate') continue; // no signals of their own
    const ids = ((line['signals'] as { signal_id: string }[] | undefined) ?? []).map((s) => s.signal_id);
    expect(ids, String(line['domain'])).toEqual(ideal.signalIds.get(String(line['domain'])) ?? []);
  }
}

describe('bulk jobs on the real dev stack and the sandbox', () => {
  let env: JobEnv;
  let dir: string;
  let crm: ReturnType<typeof messyCrm>;
  let crmUrl: string;

  beforeAll(async () => {
    // A fixed service clock, so that the sandbox's truth read after a job is the one the job saw.
    env = await startJobEnv({
      s3: true,
      gcs: true,
      sandbox: { seed: 7, clock: () => CLOCK, exportTiming: { queuedMs: 0, runningMs: 0 } },
    });
    await env.createBuckets('jobs');
    await env.startWorker();
    dir = await mkdtemp(join(tmpdir(), 'signal-kit-jobs-'));
    crm = messyCrm();
    await writeFile(join(dir, 'crm.csv'), crm.csv);
    crmUrl = pathToFileURL(join(dir, 'crm.csv')).href;
  });
  afterAll(async () => {
    await env?.stop();
  });

  const run = <T>(workflow: string, input: T & { jobId: string }) => runJob<T>(env, workflow, input);
  const ledgerTotal = () => env.sandbox.ledger.total();

  it('writes identical line sets to file://, s3:// and gs://, one line per distinct domain and one per bad row', async () => {
    const outputs = [pathToFileURL(join(dir, 'out')).href, 's3://jobs/enrich', 'gs://jobs/enrich'];
    const ideal = enrichIdeal(env.sandbox, CRM_DOMAINS, { limit: 3 });
    const sets: string[][] = [];
    for (const output of outputs) {
      const mark = env.sandbox.truth.lastCall();
      const result = await run<BulkEnrichInput>('bulkEnrich', {
        jobId: 'same-everywhere',
        input: crmUrl,
        output,
        options: { limit: 3 },
      });
      expect(result.status).toBe('completed');
      const { manifest, lines } = await readJobOutput(output, 'same-everywhere');
      expect(manifest.counts).toMatchObject({ input_rows: crm.rows, distinct: crm.distinct, invalid: crm.invalid });
      const answered = lines.filter((l) => ['ok', 'not_found', 'error'].includes(String(l['status'])));
      const domains = answered.map((l) => l['domain']);
      expect(new Set(domains).size).toBe(crm.distinct);
      expect(domains.length).toBe(crm.distinct);
      expect(lines.filter((l) => l['status'] === 'invalid')).toHaveLength(crm.invalid);
      // Every input row has exactly one line, under its record id; a repeated website points to its answer.
      expect(lines.map((l) => l['record_id']).sort()).toEqual(
        crm.csv
          .trim()
          .split('\n')
          .slice(1)
          .map((row) => row.split(',')[0])
          .sort(),
      );
      const duplicates = lines.filter((l) => l['status'] === 'duplicate');
      expect(duplicates).toHaveLength(crm.duplicates);
      const byRow = new Map(lines.map((l) => [l['row'], l]));
      for (const line of duplicates) {
        const answer = byRow.get(line['duplicate_of']);
        expect(answer?.['domain'], String(line['input'])).toBe(line['domain']);
        expect(line['answer_status']).toBe(answer?.['status']);
        expect(line['signals']).toBeUndefined();
      }
      for (const part of manifest.parts) expect(part.sha256).toMatch(/^[0-9a-f]{64}$/);
      // The truth, at the spec's price, in the fewest calls: 100 domains per bulk call.
      expectTruth(lines, ideal);
      expect(chargedSince(env.sandbox, mark)).toBe(ideal.credits);
      expect(manifest.credits_charged).toBe(ideal.credits);
      expect(callsTo(env.sandbox, PATHS.enrichBulk, mark)).toHaveLength(ideal.calls);
      sets.push(lines.map((l) => JSON.stringify(l)).sort());
    }
    expect(sets[1]).toEqual(sets[0]);
    expect(sets[2]).toEqual(sets[0]);
  });

  it('re-running a finished job id makes no API call and charges nothing', async () => {
    const output = pathToFileURL(join(dir, 'rerun')).href;
    const input = { jobId: 'rerun', input: crmUrl, output, options: { limit: 2 } };
    const first = await run<BulkEnrichInput>('bulkEnrich', input);
    const mark = env.sandbox.truth.lastCall();
    const second = await run<BulkEnrichInput>('bulkEnrich', input);
    expect(second).toEqual(first);
    // Not a single call of any kind reached the service (counted from its call record, free calls included).
    expect(env.sandbox.truth.calls({ after: mark })).toEqual([]);
  });

  it('stops at the credit budget without exceeding it, and the same job id resumes with no duplicate charge', async () => {
    const fullCost = enrichIdeal(env.sandbox, CRM_DOMAINS, { limit: 2 }).credits;
    expect(fullCost).toBeGreaterThan(450);

    const output = pathToFileURL(join(dir, 'budget-b')).href;
    const maxCredits = 450; // one batch of 100 domains could cost 100 × 2 signals × 2 credits = 400
    const before = ledgerTotal();
    const stopped = await run<BulkEnrichInput>('bulkEnrich', {
      jobId: 'budget',
      input: crmUrl,
      output,
      options: { limit: 2 },
      maxCredits,
    });
    expect(stopped.status).toBe('budget_exhausted');
    const spent = ledgerTotal() - before;
    expect(spent).toBeLessThanOrEqual(maxCredits);
    expect(stopped.credits).toBe(spent);

    const resumed = await run<BulkEnrichInput>('bulkEnrich', {
      jobId: 'budget',
      input: crmUrl,
      output,
      options: { limit: 2 },
      maxCredits: 100_000,
    });
    expect(resumed.status).toBe('completed');
    expect(ledgerTotal() - before).toBe(fullCost);
    expect(resumed.credits).toBe(fullCost);
    const { lines } = await readJobOutput(output, 'budget');
    expect(lines.filter((l) => ['ok', 'not_found', 'error'].includes(String(l['status'])))).toHaveLength(crm.distinct);
    expect(lines).toHaveLength(crm.rows);
    expectTruth(lines, enrichIdeal(env.sandbox, CRM_DOMAINS, { limit: 2 }));
  });

  it('verifies 10,000 addresses with duplicates: one line each, summary equal to the sum, duplicates charged once', async () => {
    const rows = ['email'];
    for (let i = 0; i < 10_000; i++) rows.push(`person${i % 8_000}@company${i % 500}.com`);
    // The same address again with spaces and an upper-case domain: a duplicate after normalization.
    rows.push('  person1@COMPANY1.com ', 'not-an-email', '');
    // And with its local part in capitals, 9,999 rows after the first: the service treats it as the same address, so
    // it is not sent again in a later chunk (nor paid twice).
    rows.push('PERSON2@Company2.COM');
    await writeFile(join(dir, 'emails.csv'), `${rows.join('\n')}\n`);
    const output = pathToFileURL(join(dir, 'verify')).href;
    const ideal = verifyIdeal(env.sandbox, rows.slice(1));
    const mark = env.sandbox.truth.lastCall();
    const result = await run<VerifyEmailsInput>('verifyEmails', {
      jobId: 'verify-10k',
      input: pathToFileURL(join(dir, 'emails.csv')).href,
      output,
    });
    expect(result.status).toBe('completed');
    const { manifest, lines } = await readJobOutput(output, 'verify-10k');
    const verified = lines.filter((l) => l['status'] === 'ok' || l['status'] === 'error');
    expect(verified).toHaveLength(8_000);
    // The other 2,002 rows repeat an address (two in other spellings): each has its line, answered once.
    expect(lines.filter((l) => l['status'] === 'duplicate')).toHaveLength(2_002);
    expect(lines).toHaveLength(10_004);
    expect(new Set(verified.map((l) => l['email'])).size).toBe(8_000);
    expect(lines.filter((l) => l['status'] === 'invalid')).toHaveLength(2);
    const tally = { total: 0, deliverable: 0, undeliverable: 0, risky: 0, unknown: 0 } as Record<string, number>;
    for (const line of verified) {
      if (line['status'] !== 'ok') continue;
      tally['total']! += 1;
      tally[String(line['result'])]! += 1;
    }
    expect(manifest.summary).toEqual(tally);
    for (const line of verified)
      expect(line['result'], String(line['email'])).toBe(ideal.emails.get(String(line['email']))?.result);
    // 1 credit per distinct verified address, `unknown` free (spec 8), in ceil(8,000 / 1,000) calls.
    expect(chargedSince(env.sandbox, mark)).toBe(ideal.credits);
    expect(result.credits).toBe(ideal.credits);
    expect(callsTo(env.sandbox, PATHS.verifyBulk, mark)).toHaveLength(ideal.calls);
  });

  it('retries a truncated export download and publishes every line', async () => {
    env.sandbox.setFaults({ truncateDownloads: 0.5 });
    try {
      const output = 's3://jobs/exports';
      const request = { topic_ids: ['b2b_7', 'b2b_8'] };
      const ideal = exportIdeal(env.sandbox, request);
      const mark = env.sandbox.truth.lastCall();
      const result = await run<IntentExportInput>('intentExport', {
        jobId: 'export-truncated',
        output,
        request,
        poll: { initialMs: 200, maxMs: 1000 },
      });
      expect(result.status).toBe('completed');
      const { manifest, lines } = await readJobOutput(output, 'export-truncated');
      expect(lines).toHaveLength(ideal.rowCount);
      expect(manifest.parts[0]?.lines).toBe(ideal.rowCount);
      // One submit, charged the flat rate per topic once, however many downloads it took.
      expect(callsTo(env.sandbox, PATHS.exportSubmit, mark)).toHaveLength(ideal.submits);
      expect(chargedSince(env.sandbox, mark)).toBe(ideal.credits);
      expect(lines.every((l) => typeof l['topic_id'] === 'string')).toBe(true);
      // The sandbox did cut downloads off: the download activity needed more than one attempt.
      const history = await env.client.workflow.getHandle('export-truncated').fetchHistory();
      const attempts = (history.events ?? [])
        .map((event) => event.activityTaskStartedEventAttributes?.attempt ?? 0)
        .reduce((a, b) => Math.max(a, b), 0);
      expect(attempts).toBeGreaterThan(1);
    } finally {
      env.sandbox.setFaults({});
    }
  });
});
