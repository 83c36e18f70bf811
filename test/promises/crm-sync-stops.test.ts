/**
 * Promise: a night of the CRM sync that cannot read its export, runs out of its budget, or is stopped half way
 * leaves nothing wrong behind: an unreadable export fails before any paid call with the state and last night's files
 * untouched; a stopped night is completed by the next one, which pays for no signal twice (by the call record and the
 * sandbox's truth).
 */
import { appendFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { syncManifestClaims } from '../../activities/sync/layout.ts';
import { openStore } from '../../config/storage.ts';
import type { Store } from '../../connectors/storage/index.ts';
import { readPlacedManifest } from '../../contract/manifest-read.ts';
import { SyncManifestSchema } from '../../contract/manifest-schemas.ts';
import { removeTempDirs, tempDir } from '../../testkit/drill-input.ts';
import { type JobEnv, startJobEnv } from '../../testkit/job-env.ts';
import { until } from '../../testkit/kill-drill.ts';
import { boughtSignals, type ExportRecord, readCsv, runSync, writeExport } from './crm-sync-helpers.ts';
import { callsTo, chargedSince, PATHS } from './oracle.ts';
import { DAY, FIRST_RUN_AT } from './push-helpers.ts';

const LIMIT = 5;

describe('nightly CRM sync: an unreadable export, a budget, a stopped night', () => {
  let env: JobEnv;
  let now = FIRST_RUN_AT;

  beforeAll(async () => {
    env = await startJobEnv({ sandbox: { seed: 37, clock: () => now } });
    await env.startWorker();
  });
  afterAll(async () => {
    await env?.stop();
    await removeTempDirs();
  });

  const accounts = (prefix: string, count: number): ExportRecord[] =>
    Array.from({ length: count }, (_, i) => ({ id: `${prefix}-${i}`, website: `${prefix}-co${i}.com`, industry: 'x' }));

  /** Every key under the schedule's folder with its content, as a consumer would find them. */
  async function snapshot(store: Store, name: string): Promise<Map<string, string>> {
    const files = new Map<string, string>();
    for await (const object of store.list(`${name}/`)) {
      if (object.key.includes('/work/')) continue;
      files.set(
        object.key,
        (await store.openRead(object.key)).readableLength >= 0 ? await readKey(store, object.key) : '',
      );
    }
    return files;
  }
  const readKey = async (store: Store, key: string) => {
    const chunks: Buffer[] = [];
    for await (const chunk of await store.openRead(key)) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('base64');
  };
  /** The messages of an error and its causes. */
  const messages = (error: unknown): string => {
    const parts: string[] = [];
    for (let e = error as { message?: string; cause?: unknown } | undefined; e; e = e.cause as typeof e)
      parts.push(e.message ?? '');
    return parts.join(' | ');
  };

  it('fails a night whose export cannot be read before any paid call, leaving the state and last night as they were', async () => {
    const dir = await tempDir('crm-sync-bad');
    const output = pathToFileURL(join(dir, 'out')).href;
    const store = openStore(output);
    const base = { name: 'bad', kind: 'enrich' as const, output, limit: LIMIT };
    now = FIRST_RUN_AT;
    const input = await writeExport(dir, accounts('bad', 120));
    const first = await runSync(env, 'crm-sync-bad-0', { ...base, input, runAt: new Date(now).toISOString() });
    expect(first.status).toBe('completed');
    const before = await snapshot(store, 'bad');

    now += DAY;
    await writeFile(join(dir, 'accounts.pdf'), '%PDF-1.7\n');
    await writeFile(join(dir, 'nocolumn.csv'), 'Colour,Size\nred,10\nblue,12\n');
    const cases = [
      { input: pathToFileURL(join(dir, 'missing.csv')).href, reason: /does not exist/ },
      { input: pathToFileURL(join(dir, 'accounts.pdf')).href, reason: /unsupported format/ },
      { input: pathToFileURL(join(dir, 'nocolumn.csv')).href, reason: /column/i },
    ];
    for (const [i, bad] of cases.entries()) {
      const mark = env.sandbox.truth.lastCall();
      const run = runSync(env, `crm-sync-bad-${i + 1}`, {
        ...base,
        input: bad.input,
        runAt: new Date(now).toISOString(),
      });
      const error = await run.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error, bad.input).toBeDefined();
      expect(messages(error)).toMatch(bad.reason);
      expect(callsTo(env.sandbox, PATHS.enrichBulk, mark)).toHaveLength(0);
      expect(await snapshot(store, 'bad')).toEqual(before);
    }
  });

  /** Starts a night (not waited for) at the sandbox's clock, its answers of `path` held `delayMs` after their charge. */
  async function startHeld(workflowId: string, input: object, path: string, delayMs: number) {
    const c = env.config();
    env.sandbox.setFaults({ answerDelayMs: delayMs, answerDelayPaths: [path] });
    const args = [
      { ...input, runAt: new Date(now).toISOString(), taskQueue: c.taskQueue, apiTaskQueue: c.apiTaskQueue },
    ];
    return env.client.workflow.start('crmSync', { workflowId, taskQueue: c.taskQueue, args });
  }

  /** How many objects under `prefix` match `pattern`. */
  async function countKeys(store: Store, prefix: string, pattern: RegExp): Promise<number> {
    let n = 0;
    for await (const object of store.list(prefix)) if (pattern.test(object.key)) n += 1;
    return n;
  }

  /** A schedule's export of `count` accounts and its output folder, run one at a time. */
  async function schedule(name: string, count: number) {
    const dir = await tempDir(`crm-sync-${name}`);
    const output = pathToFileURL(join(dir, 'out')).href;
    const records = accounts(name, count);
    const input = await writeExport(dir, records);
    const base = { name, kind: 'enrich' as const, input, output, limit: LIMIT, concurrency: 1 };
    return { store: openStore(output), records, base };
  }

  it('completes a night stopped by --max-credits on the next night, paying for no signal twice', async () => {
    const { store, records, base } = await schedule('budget', 250);
    now = FIRST_RUN_AT + 10 * DAY;
    const mark = env.sandbox.truth.lastCall();
    // One call's worst case is 100 companies × 5 × 2 = 1000 credits: the first call fits, a second does not.
    const stopped = await runSync(env, 'crm-sync-budget-0', {
      ...base,
      maxCredits: 1500,
      runAt: new Date(now).toISOString(),
    });
    expect(stopped.status).toBe('budget_exhausted');
    const firstCalls = callsTo(env.sandbox, PATHS.enrichBulk, mark);
    expect(firstCalls).toHaveLength(1);
    const answered = new Set((firstCalls[0]!.asked as { domains: string[] }).domains);
    const rows = await readCsv(store, stopped.rowsUrl);
    expect(rows.map((r) => r['record_id']).sort()).toEqual(records.map((r) => r.id).sort());
    for (const row of rows) {
      const asked = answered.has(row['domain']!);
      expect(row['status'] === 'error', row['record_id']).toBe(!asked);
      if (!asked) expect(row['error_code']).toBe('budget_exhausted');
    }

    const firstAt = now;
    now += DAY;
    const second = await runSync(env, 'crm-sync-budget-1', { ...base, runAt: new Date(now).toISOString() });
    expect(second.status).toBe('completed');
    // Its ideal, from the truth: what is new since the stopped night for the companies it answered, the full answer
    // for the others.
    let ideal = 0;
    for (const record of records) {
      const [truth] = env.sandbox.truth.companySignals(
        [record.website],
        answered.has(record.website) ? { detected_after: firstAt } : {},
      );
      ideal += 2 * truth!.signals.slice(0, LIMIT).length;
    }
    expect(chargedSince(env.sandbox, mark) - firstCalls[0]!.credits).toBe(ideal);
    const bought = boughtSignals(env.sandbox, mark);
    expect(new Set(bought).size).toBe(bought.length);
    const after = await readCsv(store, second.rowsUrl);
    expect(after.filter((r) => r['status'] === 'error')).toEqual([]);
    // The night completed: every record the stopped night could not answer is in changes.csv.
    const changed = new Set((await readCsv(store, second.changesUrl)).map((r) => r['record_id']));
    for (const record of records) if (!answered.has(record.website)) expect(changed.has(record.id)).toBe(true);
  });

  it('marks every record a budget-stopped night did not reach budget_exhausted, also those an earlier night answered; counts skipped lines', async () => {
    const { store, records, base } = await schedule('marks', 250);
    // A Salesforce report's end: a blank line, then its footer (the report's name and its confidentiality line).
    const input = new URL(base.input);
    await appendFile(input, '\n"Accounts by Website"\n"Confidential Information - Do Not Distribute"\n');
    const notRecords = 3;
    now = FIRST_RUN_AT + 50 * DAY;
    const first = await runSync(env, 'crm-sync-marks-0', { ...base, runAt: new Date(now).toISOString() });
    expect(first.status).toBe('completed');

    // The next night, weeks later: one call's worst case (100 companies × 5 × 2) fits the budget, a second does not
    // once the first has cost anything.
    now += 60 * DAY;
    const mark = env.sandbox.truth.lastCall();
    const stopped = await runSync(env, 'crm-sync-marks-1', {
      ...base,
      maxCredits: 1000,
      runAt: new Date(now).toISOString(),
    });
    expect(stopped.status).toBe('budget_exhausted');
    const reached = new Set(
      callsTo(env.sandbox, PATHS.enrichBulk, mark).flatMap((call) => (call.asked as { domains: string[] }).domains),
    );
    const notReached = records.filter((r) => !reached.has(r.website));
    // The scenario holds what it claims: records the night reached and records it did not, all answered before.
    expect(reached.size).toBeGreaterThan(0);
    expect(notReached.length).toBeGreaterThan(0);
    const rows = await readCsv(store, stopped.rowsUrl);
    expect(rows.map((r) => r['record_id']).sort()).toEqual(records.map((r) => r.id).sort());
    const marked = rows.filter((r) => r['error_code'] === 'budget_exhausted').map((r) => r['record_id']);
    expect(marked.sort()).toEqual(notReached.map((r) => r.id).sort());
    for (const row of rows) if (row['error_code'] === 'budget_exhausted') expect(row['status']).toBe('error');

    for (const night of [first, stopped]) {
      const manifest = JSON.parse(await store.readText(night.manifestUrl.slice(store.url.length + 1))) as {
        counts: { input_rows: number; skipped_lines?: number };
      };
      expect(manifest.counts).toMatchObject({ input_rows: records.length, skipped_lines: notRecords });
    }
  });

  it("reads a night's manifest back through the contract only where its own ids place it", async () => {
    const { store, base } = await schedule('placed', 120);
    now = FIRST_RUN_AT + 70 * DAY;
    const night = await runSync(env, 'crm-sync-placed-0', { ...base, runAt: new Date(now).toISOString() });
    const key = night.manifestUrl.slice(store.url.length + 1);
    const read = (at: string) => readPlacedManifest(store, at, SyncManifestSchema, syncManifestClaims);
    expect((await read(key))?.manifest).toMatchObject({ kind: 'crm-sync', name: 'placed', run_id: night.runId });
    // The same bytes planted in another schedule's folder, another night's, or above the night's folder.
    const text = await store.readText(key);
    const planted = [
      key.replace(/^placed\//, 'other/'),
      key.replace(`run-${night.runId}`, 'run-20270101T000000Z'),
      'placed/runs/_manifest.json',
    ];
    for (const at of planted) {
      await store.writeText(at, text, { contentType: 'application/json' });
      expect((await read(at))?.skipped, at).toMatch(/not in its own place/);
    }
  });

  it('carries a night whose run was stopped half way into the next run, paying for no signal twice', async () => {
    const { store, records, base } = await schedule('stopped', 1000);
    now = FIRST_RUN_AT + 20 * DAY;
    const mark = env.sandbox.truth.lastCall();
    const handle = await startHeld('crm-sync-stopped-0', base, PATHS.enrichBulk, 1_500);
    const answers = () => countKeys(store, 'stopped/work/', /answer-\d+\.json$/);
    await until('a saved answer', async () => (await answers()) >= 1);
    await handle.terminate('stopped half way (a drill)');
    env.sandbox.setFaults({});
    // Every call the stopped run made has been answered and saved before the next night starts.
    await until('the stopped run to settle', async () => {
      const charged = callsTo(env.sandbox, PATHS.enrichBulk, mark).filter((call) => call.credits > 0).length;
      return charged > 0 && charged === (await answers());
    });
    // Stopped half way: fewer calls than its 10 batches, whatever the machine's load made of the wait above.
    expect(callsTo(env.sandbox, PATHS.enrichBulk, mark).length).toBeLessThan(10);

    now += DAY;
    const next = await runSync(env, 'crm-sync-stopped-1', { ...base, runAt: new Date(now).toISOString() });
    expect(next.status).toBe('completed');
    const bought = boughtSignals(env.sandbox, mark);
    expect(new Set(bought).size).toBe(bought.length);
    const manifest = JSON.parse(await store.readText(next.manifestUrl.slice(store.url.length + 1))) as {
      state: { carried_from?: string };
    };
    expect(manifest.state.carried_from).toBeDefined();
    const rows = await readCsv(store, next.rowsUrl);
    expect(rows.map((r) => r['record_id']).sort()).toEqual(records.map((r) => r.id).sort());
    expect(rows.filter((r) => r['status'] === 'error')).toEqual([]);
  });

  it('carries a contacts night stopped inside a batch into the next run: each contact paid once', async () => {
    const dir = await tempDir('crm-sync-contacts-stopped');
    const people = env.sandbox.truth
      .intentContacts({ topic_ids: ['b2b_901', 'b2b_902', 'b2b_903'] })
      .map((item) => item.contact.email)
      .filter((email, i, all): email is string => !!email && all.indexOf(email) === i)
      .slice(0, 60);
    const csv = ['Record ID,Email', ...people.map((email, i) => `80${i},${email}`)].join('\n');
    await writeFile(join(dir, 'contacts.csv'), `${csv}\n`);
    const output = pathToFileURL(join(dir, 'out')).href;
    const store = openStore(output);
    const night = {
      ...{ name: 'contacts-stopped', kind: 'enrich-contacts' as const, output, limit: LIMIT, concurrency: 1 },
      input: pathToFileURL(join(dir, 'contacts.csv')).href,
    };
    now = FIRST_RUN_AT + 40 * DAY;
    const mark = env.sandbox.truth.lastCall();
    const handle = await startHeld('crm-sync-contacts-stopped-0', night, '/v1/contacts/enrich', 300);
    const receipts = () => countKeys(store, 'contacts-stopped/work/', /answer-\d+-\d{3}\.json$/);
    await until('a few contacts answered', async () => (await receipts()) >= 5);
    await handle.terminate('stopped inside a batch (a drill)');
    env.sandbox.setFaults({});
    const calls = () => callsTo(env.sandbox, '/v1/contacts/enrich', mark).filter((call) => call.status !== null);
    await until('the stopped run to settle', async () => calls().length > 0 && calls().length === (await receipts()));
    expect(calls().length).toBeLessThan(people.length);

    // The next night, at the same sandbox clock: together the two nights pay each contact's answer once.
    const next = await runSync(env, 'crm-sync-contacts-stopped-1', {
      ...night,
      runAt: new Date(now + 60_000).toISOString(),
    });
    expect(next.status).toBe('completed');
    const ideal = env.sandbox.truth
      .contactSignals(people)
      .reduce((sum, t) => sum + (t.status === 'ok' ? 2 * Math.min(LIMIT, t.signals.length) : 0), 0);
    expect(chargedSince(env.sandbox, mark)).toBe(ideal);
    const rows = await readCsv(store, next.rowsUrl);
    expect(rows).toHaveLength(people.length);
    expect(rows.filter((r) => r['status'] === 'error')).toEqual([]);
  });
});
