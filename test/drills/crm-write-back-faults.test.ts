/**
 * Fault drills of a night's write-back (issue 34, "a worker SIGKILLed mid-upload, a CRM outage then recovery, and an
 * expired token: every change written once in effect, no second ingest job, nothing left pending; no token in decoded
 * history or logs"), each a whole `crmSync` night with `writeBack` on real `signal-kit worker` processes, a real
 * Temporal server, and the HubSpot and Salesforce stand-ins (`cli/local-crms.ts`, as `signal-kit dev` starts them).
 * Every count is the stand-in's own (its request log, its ingest jobs, its token grants), every value read back with
 * the official clients (`@hubspot/api-client`, `jsforce`) and compared with the night's `rows.csv`.
 */
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { Client as HubspotClient } from '@hubspot/api-client';
import type { WorkflowHandle } from '@temporalio/client';
import { parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import jsforce from 'jsforce';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SyncResult, WriteBackSummary } from '../../activities/sync/types.ts';
import { DEFAULT_WRITE_COLUMNS } from '../../activities/writeback/fields.ts';
import { closeLedger, readLedger, writeBackState } from '../../activities/writeback/ledger.ts';
import { owedNights } from '../../activities/writeback/owed.ts';
import { type LocalCrms, startLocalCrms } from '../../cli/local-crms.ts';
import { openStore } from '../../config/storage.ts';
import { crmFieldName } from '../../connectors/crm/fields.ts';
import type { CrmName } from '../../connectors/crm/writer.ts';
import { ALL_SCOPES } from '../../crm-sandbox/hubspot/index.ts';
import { SANDBOX_EPOCH_MS } from '../../sandbox/index.ts';
import { type ChildWorker, runCli, startChildWorker } from '../../testkit/cli-process.ts';
import { removeTempDirs, tempDir } from '../../testkit/drill-input.ts';
import { type JobEnv, startJobEnv } from '../../testkit/job-env.ts';
import { forgetStickyQueues, until } from '../../testkit/kill-drill.ts';
import { apiRateLimiterId } from '../../workflows/rate-limiter.ts';
import { decodeHistory } from '../helpers/history-text.ts';
import { readCsv } from '../promises/crm-sync-helpers.ts';

const DAY = 86_400_000;
const NOW = SANDBOX_EPOCH_MS + 90 * DAY;
/** Accounts seeded in both CRMs: a Salesforce night past 2,000 changes goes through one ingest job. */
const ACCOUNTS = 3_000;
/** How soon another worker takes over a killed one's write-back (the default is 5 minutes). */
const HEARTBEAT_MS = 5_000;

describe('drill: a night\u2019s write-back under faults, on real workers', () => {
  let env: JobEnv;
  let crms: LocalCrms;
  let dir: string;
  let worker: ChildWorker | undefined;
  const workerLogs: string[] = [];
  const handles: WorkflowHandle[] = [];
  const outputs: string[] = [];
  /** Tokens handed to workers besides the stand-ins' first ones. */
  const extraTokens: string[] = [];

  const workerEnv = (overrides: Record<string, string> = {}) =>
    env.childEnv({ ...crms.env, SIGNAL_KIT_LOG_LEVEL: 'info', ...overrides });
  async function startWorker(overrides: Record<string, string> = {}) {
    if (worker) {
      workerLogs.push(worker.output());
      await worker.kill();
    }
    worker = await startChildWorker(workerEnv(overrides), 60_000, { tailLines: 20_000 });
    return worker;
  }

  /** An export of the CRM's seeded accounts `from` … `to` (its own ids and headers), as `name`.csv. */
  async function exportOf(crm: CrmName, from: number, to: number, name: string): Promise<string> {
    const file = crm === 'hubspot' ? crms.exports.hubspot : (crms.exports.salesforce as string);
    const [header, ...rows] = parse(await readFile(file, 'utf8')) as string[][];
    const path = join(dir, `${name}.csv`);
    await writeFile(path, stringify([header as string[], ...rows.slice(from, to)]));
    return pathToFileURL(path).href;
  }

  /** Starts night `n` (a day apart) of schedule `name` writing back to `crm`. */
  async function startNight(name: string, n: number, crm: CrmName, input: string) {
    const c = env.config();
    const output = pathToFileURL(join(dir, 'out')).href;
    outputs.push(output);
    const handle = await env.client.workflow.start('crmSync', {
      workflowId: `${name}-night-${n}`,
      taskQueue: c.taskQueue,
      workflowTaskTimeout: 3_000,
      args: [
        {
          name,
          kind: 'enrich',
          input,
          output,
          limit: 5,
          concurrency: 2,
          runAt: new Date(NOW + n * DAY).toISOString(),
          writeBack: { crm },
          writeBackHeartbeatMs: HEARTBEAT_MS,
          taskQueue: c.taskQueue,
          apiTaskQueue: c.apiTaskQueue,
        },
      ],
    });
    handles.push(handle);
    return { handle, output };
  }

  /** Kills the worker (SIGKILL, its process group) and starts another, as a crash and a restart would. */
  async function killWorker(workflowId: string) {
    workerLogs.push(worker?.output() ?? '');
    await worker?.kill();
    worker = undefined;
    await forgetStickyQueues(env, [workflowId, apiRateLimiterId(env.config().apiTaskQueue)]);
    await startWorker();
  }

  const summaryOf = (result: SyncResult) => result.writeBack as WriteBackSummary & { error?: string };

  /** The night's rows.csv, by record id: CRM field → cell (the kit's enrichment fields). */
  async function rowsOf(output: string, result: SyncResult, crm: CrmName) {
    const rows = await readCsv(openStore(output), result.rowsUrl);
    return new Map(
      rows.map((row) => [
        row['record_id'] as string,
        Object.fromEntries(DEFAULT_WRITE_COLUMNS.map((c) => [crmFieldName(crm, c), row[c] ?? ''])),
      ]),
    );
  }

  /** The CRM's values of the kit's fields, read back with the official client, by record id. */
  async function crmValues(crm: CrmName, ids: string[]): Promise<Map<string, Record<string, unknown>>> {
    const fields = DEFAULT_WRITE_COLUMNS.map((c) => crmFieldName(crm, c));
    const found = new Map<string, Record<string, unknown>>();
    if (crm === 'hubspot') {
      const api = new HubspotClient({ accessToken: crms.hubspot.token, basePath: crms.hubspot.url }).crm.companies;
      for (let at = 0; at < ids.length; at += 100) {
        const inputs = ids.slice(at, at + 100).map((id) => ({ id }));
        const answer = await api.batchApi.read({ inputs, properties: fields, propertiesWithHistory: [] });
        for (const record of answer.results) found.set(record.id, record.properties);
      }
      return found;
    }
    const sf = crms.salesforce!;
    const conn = new jsforce.Connection({ instanceUrl: sf.url, accessToken: sf.issueToken(), version: sf.version });
    for (let at = 0; at < ids.length; at += 2000) {
      const chunk = ids.slice(at, at + 2000);
      const records = (await conn.sobject('Account').retrieve(chunk, { fields })) as unknown as Record<
        string,
        unknown
      >[];
      chunk.forEach((id, i) => {
        found.set(id, records[i] as Record<string, unknown>);
      });
    }
    return found;
  }

  const norm = (v: unknown) => {
    if (v === null || v === undefined || v === '') return '';
    const s = String(v);
    if (/^\d{4}-\d{2}-\d{2}T/.test(s)) return new Date(s.replace(/\+0000$/, 'Z')).toISOString();
    return /^-?\d+(\.0+)?$/.test(s) ? String(Number(s)) : s;
  };

  /** Record ids whose CRM values differ from rows.csv in any written field (none, when the night is in the CRM). */
  async function differing(crm: CrmName, rows: Map<string, Record<string, string>>): Promise<string[]> {
    const back = await crmValues(crm, [...rows.keys()]);
    return [...rows]
      .filter(([id, want]) => Object.entries(want).some(([field, cell]) => norm(back.get(id)?.[field]) !== norm(cell)))
      .map(([id]) => id);
  }

  /** What the schedule's ledger holds: its pending changes, its checkpoint, the nights it owes. */
  async function ledgerOf(output: string, name: string) {
    const ledger = await readLedger(openStore(output), name);
    try {
      return { pending: ledger.records.count('pending'), checkpoint: ledger.checkpoint, owed: owedNights(ledger) };
    } finally {
      await closeLedger(ledger);
    }
  }

  /** Until the night's pre-flight (its first CRM calls) is done: a token expired from now on fails its write-back. */
  async function preflightDone(handle: WorkflowHandle) {
    await until(
      'the pre-flight done',
      async () => {
        const { events } = await handle.fetchHistory();
        const scheduled = new Set(
          (events ?? [])
            .filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'preflightWriteBack')
            .map((e) => String(e.eventId)),
        );
        return (events ?? []).some((e) =>
          scheduled.has(String(e.activityTaskCompletedEventAttributes?.scheduledEventId)),
        );
      },
      120_000,
      50,
    );
  }

  const hubspotUpdates = (mark: number) =>
    crms.hubspot
      .calls()
      .slice(mark)
      .filter((call) => call.path.endsWith('/batch/update') && call.status < 300);

  beforeAll(async () => {
    env = await startJobEnv({ sandbox: { seed: 41, clock: () => NOW, faults: { latencyMs: 100 } } });
    dir = await tempDir('crm-wb-faults');
    const accounts = Array.from({ length: ACCOUNTS }, (_, i) => ({
      name: `Drill Co ${i}`,
      website: `https://wb-drill-co${i}.com`,
      linkedin: '',
    }));
    crms = await startLocalCrms({ accounts, dir });
    await startWorker();
  }, 180_000);
  afterAll(async () => {
    await worker?.kill();
    await crms?.stop();
    await env?.stop();
    await removeTempDirs();
  });

  it('Salesforce: the worker SIGKILLed in the middle of the ingest job\u2019s CSV upload: one job, every change once, nothing pending', async () => {
    const sf = crms.salesforce!;
    const input = await exportOf('salesforce', 0, 2_100, 'sf-kill');
    const jobs = sf.ingestJobsCreated;
    // The upload is cut mid-way: Salesforce never receives it whole (the stand-in never reads it).
    sf.fail({ method: 'PUT', path: '/batches', stall: true });
    const { handle, output } = await startNight('sf-kill', 1, 'salesforce', input);
    await until('the CSV upload in flight', () => sf.stalledCalls >= 1, 180_000, 10);
    await killWorker(handle.workflowId);
    const result = (await handle.result()) as SyncResult;
    expect(summaryOf(result)).toMatchObject({ crm: 'salesforce', object: 'Account', written: 2_100, pending: 0 });
    // The stand-in's truth: the ingest jobs it created, and what its records hold.
    expect(sf.ingestJobsCreated - jobs).toBe(1);
    const job = sf.ingestJobs().at(-1);
    expect(job?.successful).toHaveLength(2_100);
    expect(await differing('salesforce', await rowsOf(output, result, 'salesforce'))).toEqual([]);
    const ledger = await ledgerOf(output, 'sf-kill');
    expect(ledger.pending).toBe(0);
    expect(ledger.checkpoint).toBeUndefined();
  }, 300_000);

  it('HubSpot: the worker SIGKILLed in the middle of its batch updates: every change in the CRM, each pending record sent once by the next worker, nothing pending', async () => {
    const hubspot = crms.hubspot;
    const input = await exportOf('hubspot', 0, 1_000, 'hs-kill');
    const mark = hubspot.calls().length;
    // The fourth batch update is in flight when the worker dies: HubSpot never receives it.
    hubspot.stall('/batch/update', 1, 3);
    const { handle, output } = await startNight('hs-kill', 1, 'hubspot', input);
    await until('a batch update in flight', () => hubspot.stalledCalls >= 1, 180_000, 10);
    const beforeKill = hubspotUpdates(mark).length;
    expect(beforeKill).toBe(3);
    await killWorker(handle.workflowId);
    const result = (await handle.result()) as SyncResult;
    expect(summaryOf(result)).toMatchObject({ crm: 'hubspot', object: 'companies', written: 1_000, pending: 0 });
    expect(await differing('hubspot', await rowsOf(output, result, 'hubspot'))).toEqual([]);
    // An update by id is idempotent and HubSpot writes keep no checkpoint: the next worker sends every record still
    // pending once, ceil(1000 / 100) calls, and nothing after that.
    expect(hubspotUpdates(mark).length - beforeKill).toBe(Math.ceil(1_000 / 100));
    expect((await ledgerOf(output, 'hs-kill')).pending).toBe(0);
  }, 300_000);

  it('HubSpot: an outage across the whole write-back, then recovery: the night ends with every change pending, the next night writes them first, once', async () => {
    const hubspot = crms.hubspot;
    const input = await exportOf('hubspot', 1_000, 1_300, 'hs-outage');
    const mark = hubspot.calls().length;
    hubspot.fault({ status: 503, path: '/batch/update', times: Number.POSITIVE_INFINITY });
    const first = await startNight('hs-outage', 1, 'hubspot', input);
    const night1 = (await first.handle.result()) as SyncResult;
    hubspot.clearFaults();
    expect(summaryOf(night1)).toMatchObject({ written: 0, notAttempted: 300, pending: 300 });
    expect(hubspotUpdates(mark)).toEqual([]);
    expect((await ledgerOf(first.output, 'hs-outage')).pending).toBe(300);

    const mark2 = hubspot.calls().length;
    const second = await startNight('hs-outage', 2, 'hubspot', input);
    const night2 = (await second.handle.result()) as SyncResult;
    expect(summaryOf(night2)).toMatchObject({ written: 300, pending: 0 });
    expect(await writeBackState(openStore(second.output), 'hs-outage')).toMatchObject({ owedNights: [] });
    expect(hubspotUpdates(mark2)).toHaveLength(Math.ceil(300 / 100));
    expect(await differing('hubspot', await rowsOf(second.output, night2, 'hubspot'))).toEqual([]);
  }, 300_000);

  it('Salesforce: the session expired after the pre-flight: refreshed through the JWT bearer flow (one grant), every change written, nothing pending', async () => {
    const sf = crms.salesforce!;
    const input = await exportOf('salesforce', 2_100, 2_400, 'sf-token');
    const { handle, output } = await startNight('sf-token', 1, 'salesforce', input);
    await preflightDone(handle);
    const grants = sf.tokenGrants;
    sf.expireSessions();
    const result = (await handle.result()) as SyncResult;
    expect(summaryOf(result)).toMatchObject({ written: 300, pending: 0 });
    expect(sf.tokenGrants - grants).toBe(1);
    expect(await differing('salesforce', await rowsOf(output, result, 'salesforce'))).toEqual([]);
    expect((await ledgerOf(output, 'sf-token')).pending).toBe(0);
  }, 300_000);

  it('HubSpot: the private-app token expired after the pre-flight: the night stands with a CrmAuthError reason and every change pending; the next night, with a good token, writes them once', async () => {
    const hubspot = crms.hubspot;
    const input = await exportOf('hubspot', 1_300, 1_600, 'hs-token');
    const expiring = hubspot.addToken(ALL_SCOPES);
    extraTokens.push(expiring);
    await startWorker({ HUBSPOT_ACCESS_TOKEN: expiring });
    const mark = hubspot.calls().length;
    const first = await startNight('hs-token', 1, 'hubspot', input);
    await preflightDone(first.handle);
    hubspot.expireToken(expiring);
    const night1 = (await first.handle.result()) as SyncResult;
    const error = summaryOf(night1).error ?? '';
    expect(error).toMatch(/^hubspot: .*HUBSPOT_ACCESS_TOKEN/);
    expect(error).not.toContain(expiring);
    expect(hubspotUpdates(mark)).toEqual([]);
    // Refused at the write-back's own pre-flight: the night is owed whole (its changes.csv), written first next night.
    const { owed } = await ledgerOf(first.output, 'hs-token');
    expect(owed.map((run) => run.runId)).toEqual([night1.runId]);
    // ...and schedule state says so (0 pending alone would read as nothing left to write).
    expect(await writeBackState(openStore(first.output), 'hs-token')).toMatchObject({ owedNights: [night1.runId] });

    const good = hubspot.addToken(ALL_SCOPES);
    extraTokens.push(good);
    await startWorker({ HUBSPOT_ACCESS_TOKEN: good });
    const mark2 = hubspot.calls().length;
    const second = await startNight('hs-token', 2, 'hubspot', input);
    const night2 = (await second.handle.result()) as SyncResult;
    expect(summaryOf(night2)).toMatchObject({ written: 300, pending: 0 });
    expect(await writeBackState(openStore(second.output), 'hs-token')).toMatchObject({ owedNights: [] });
    expect(hubspotUpdates(mark2)).toHaveLength(Math.ceil(300 / 100));
    expect(await differing('hubspot', await rowsOf(second.output, night2, 'hubspot'))).toEqual([]);
  }, 300_000);

  it('Salesforce: a brief outage mid write-back is waited out: every change written once, each pause said in the worker\u2019s log', async () => {
    const sf = crms.salesforce!;
    const input = await exportOf('salesforce', 2_400, 2_700, 'sf-outage');
    const { handle, output } = await startNight('sf-outage', 1, 'salesforce', input);
    await preflightDone(handle);
    const mark = sf.calls.length;
    const logged = () => (worker?.output().match(/write-back: paused \d+ ms: [^\n]*SERVER_UNAVAILABLE/g) ?? []).length;
    const before = logged();
    sf.fail({ method: 'PATCH', path: '/composite/sobjects', status: 503, times: 2 });
    const result = (await handle.result()) as SyncResult;
    expect(summaryOf(result)).toMatchObject({ written: 300, pending: 0 });
    const refused = sf.calls.slice(mark).filter((call) => call.status === 503);
    expect(refused).toHaveLength(2);
    // Each refused call is one pause the worker's log names, with the CRM's code.
    expect(logged() - before).toBe(refused.length);
    expect(await differing('salesforce', await rowsOf(output, result, 'salesforce'))).toEqual([]);
  }, 300_000);

  it('no CRM token or key in any decoded workflow history, worker log, CLI output or output file of the drills', async () => {
    const sf = crms.salesforce!;
    const keyLines = (sf.privateKeyPem ?? '')
      .split('\n')
      .filter((line) => line.length >= 16 && !line.startsWith('-----'));
    const secrets = [
      crms.hubspot.token,
      ...extraTokens,
      ...sf.sessionTokens().flatMap((token) => [token, token.split('!')[1] as string]),
      ...keyLines,
    ];
    expect(secrets.length).toBeGreaterThan(10);
    const found = (where: string, text: string) =>
      secrets.filter((secret) => text.includes(secret)).map((secret) => `${where}: ${secret.slice(0, 12)}…`);
    const leaks: string[] = [];

    // Every run of every night (a night continues as new), decoded as the kit reads payloads back.
    let runs = 0;
    for (const handle of handles) {
      for await (const run of env.client.workflow.list({ query: `WorkflowId = '${handle.workflowId}'` })) {
        const history = await env.client.workflow.getHandle(run.workflowId, run.runId).fetchHistory();
        const decoded = await decodeHistory(history);
        expect(decoded.undecoded).toBe(0);
        leaks.push(...found(`history ${run.workflowId}/${run.runId}`, decoded.text));
        runs += 1;
      }
    }
    expect(runs).toBeGreaterThanOrEqual(handles.length);

    const logs = [...workerLogs, worker?.output() ?? ''].join('\n');
    // Not vacuous: the workers logged their write-backs.
    expect(logs).toContain('write-back: writing');
    leaks.push(...found('worker log', logs));

    for (const crm of ['hubspot', 'salesforce'] as const) {
      const cli = await runCli(['crm', 'check', crm], workerEnv());
      expect(cli.code, cli.stderr).toBe(0);
      leaks.push(...found(`crm check ${crm}`, cli.stdout + cli.stderr));
    }

    const files = (await readdir(join(dir, 'out'), { recursive: true, withFileTypes: true })).filter((f) => f.isFile());
    expect(files.length).toBeGreaterThan(20);
    for (const file of files) {
      const path = join(file.parentPath, file.name);
      const bytes = await readFile(path);
      const text = (path.endsWith('.gz') ? gunzipSync(bytes) : bytes).toString('latin1');
      leaks.push(...found(path, text));
    }
    expect(leaks).toEqual([]);
  }, 300_000);
});
