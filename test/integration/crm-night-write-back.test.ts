/**
 * The write-back as a whole night, from the CLI: `schedule create --kind enrich --write-back hubspot|salesforce`, then
 * `schedule run --wait` through the real worker and the real Temporal dev server, nights on a changing export; the CRM
 * read back with the official clients (`@hubspot/api-client`, `jsforce`) equals each night's `rows.csv` for every
 * written field. Each night's counts (written, rejected, not attempted, carried, pending) are checked against the
 * ideal from the CRM stand-in's truth (which records exist, are deleted, are locked) and the night's `changes.csv`,
 * in `schedule run --wait`'s output, in the manifest's `write_back` section and in `schedule state`. At create, a
 * missing field and a missing scope are refused with exit 2, naming them, and no schedule is made.
 */
import { createHash } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { Client as HubspotClient } from '@hubspot/api-client';
import { Connection } from 'jsforce';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { SyncResult } from '../../activities/sync/types.ts';
import { kitFields } from '../../activities/writeback/fields.ts';
import type { WriteBackResult } from '../../activities/writeback/types.ts';
import { runCli } from '../../cli/program.ts';
import { openStore } from '../../config/storage.ts';
import { crmFieldName } from '../../connectors/crm/fields.ts';
import { createHubspotWriter } from '../../connectors/crm/hubspot/index.ts';
import type { CrmName } from '../../connectors/crm/writer.ts';
import { SyncManifestSchema } from '../../contract/manifest-schemas.ts';
import { type HubspotStandIn, startHubspotStandIn } from '../../crm-sandbox/hubspot/index.ts';
import { type SalesforceStandIn, startSalesforceStandIn } from '../../crm-sandbox/salesforce/index.ts';
import { useScheduleEnv } from '../helpers/schedule-cli.ts';
import { type ExportRecord, readCsv, writeExport } from '../promises/crm-sync-helpers.ts';

/** The columns a night writes by default (activities/writeback/fields.ts DEFAULT_WRITE_COLUMNS). */
const WRITTEN = ['status', 'signal_count', 'latest_signal_at', 'latest_signal_type', 'latest_signal_summary'];

/** A CRM value and a rows.csv cell compared as the CRM types them (numbers, datetimes, empty). */
const norm = (v: unknown) => {
  if (v === null || v === undefined || v === '') return '';
  const s = String(v);
  return /^\d{4}-\d{2}-\d{2}T/.test(s) ? new Date(s).toISOString() : /^-?\d+(\.0+)?$/.test(s) ? String(Number(s)) : s;
};

const saved = { ...process.env };
let hubspot: HubspotStandIn;
let salesforce: SalesforceStandIn;

describe('a night with --write-back, from schedule create to the CRM', () => {
  const { ctx, cli } = useScheduleEnv('crm-night-wb');

  beforeAll(async () => {
    hubspot = await startHubspotStandIn({ rateLimit: { perInterval: 0 } });
    const custom = kitFields('salesforce', 'enrich').map((f) =>
      f.type === 'number'
        ? { name: f.name, type: 'double' as const, precision: 18, scale: 0 }
        : f.type === 'datetime'
          ? { name: f.name, type: 'datetime' as const }
          : { name: f.name, type: 'string' as const, length: f.length ?? 255 },
    );
    salesforce = await startSalesforceStandIn({ customFields: { Account: custom } });
    // The worker (in this process) and the CLI read the CRMs' settings from the environment, as in production.
    Object.assign(process.env, {
      HUBSPOT_API_URL: hubspot.url,
      HUBSPOT_ACCESS_TOKEN: hubspot.token,
      SALESFORCE_INSTANCE_URL: salesforce.url,
      SALESFORCE_ACCESS_TOKEN: salesforce.accessToken,
    });
  });
  afterAll(async () => {
    for (const key of Object.keys(process.env)) if (/^(HUBSPOT|SALESFORCE)_/.test(key)) delete process.env[key];
    Object.assign(process.env, saved);
    await hubspot?.close();
    await salesforce?.close();
  });

  /** The CRM's side of a night: its records of the export, and which of them the CRM cannot take tonight. */
  interface CrmTruth {
    crm: CrmName;
    /** Every written field of these records, as the official client reads them back. */
    read(ids: string[]): Promise<Map<string, Record<string, unknown>>>;
    deleted: ReadonlySet<string>;
    /** Locked rows: refused tonight (transient), written the next night. */
    locked: ReadonlySet<string>;
  }

  /**
   * One `schedule run --wait` and every place that reports it: the ideal counts from the CRM's truth and tonight's
   * changes (plus what the last night left pending), the CRM read back equal to rows.csv, the manifest's section.
   */
  async function night(name: string, output: string, truth: CrmTruth, pendingBefore: readonly string[]) {
    const run = await cli<SyncResult>('run', name, '--wait');
    expect(run.code, JSON.stringify(run.out)).toBe(0);
    const store = openStore(output);
    const rows = await readCsv(store, run.out.rowsUrl);
    const changes = (await readCsv(store, run.out.changesUrl)).map((r) => r['record_id'] as string);
    const tonight = new Set(rows.map((r) => r['record_id'] as string));
    const carried = pendingBefore.filter((id) => tonight.has(id) && !changes.includes(id));
    const toWrite = [...changes, ...carried];
    const refused = toWrite.filter((id) => truth.deleted.has(id) || truth.locked.has(id));
    const ideal = {
      written: toWrite.length - refused.length,
      rejected: refused.length,
      transient: refused.filter((id) => truth.locked.has(id)).length,
      notAttempted: 0,
      carried: carried.length,
      pending: refused.filter((id) => truth.locked.has(id)).length,
    };
    const result = run.out.writeBack as WriteBackResult;
    expect(result).toMatchObject(ideal);

    // writeback.csv: one line per record the night had to write, the CRM's code on each refusal.
    const report = await readCsv(store, result.reportUrl);
    expect(report.map((r) => r['record_id']).sort()).toEqual([...toWrite].sort());
    for (const line of report) {
      const id = line['record_id'] as string;
      expect(line['outcome'], id).toBe(refused.includes(id) ? 'rejected' : 'written');
      if (refused.includes(id)) expect(line['crm_code'], id).not.toBe('');
    }

    // The manifest's write_back section says the same, and lists writeback.csv as a proven part.
    const key = run.out.manifestUrl.slice(store.url.length + 1);
    const manifest = SyncManifestSchema.parse(JSON.parse(await store.readText(key)));
    expect(manifest.write_back).toMatchObject({
      crm: truth.crm,
      status: 'done',
      written: ideal.written,
      rejected: ideal.rejected,
      transient: ideal.transient,
      not_attempted: 0,
      carried: ideal.carried,
      pending: ideal.pending,
    });
    const part = manifest.write_back?.report;
    const body = Buffer.from(await store.readText(part?.key ?? 'missing'));
    expect(part).toMatchObject({ lines: toWrite.length, bytes: body.length, format: 'csv' });
    expect(part?.sha256).toBe(createHash('sha256').update(body).digest('hex'));

    // The CRM equals rows.csv for every written field of every record of tonight's export it holds.
    const live = [...tonight].filter((id) => !truth.deleted.has(id) && !truth.locked.has(id));
    const crm = await truth.read(live);
    for (const row of rows) {
      const id = row['record_id'] as string;
      if (!live.includes(id)) continue;
      for (const column of WRITTEN) {
        const field = crmFieldName(truth.crm, column);
        expect(norm(crm.get(id)?.[field]), `${id} ${field}`).toBe(norm(row[column]));
      }
    }
    return { result, rows, pending: refused.filter((id) => truth.locked.has(id)) };
  }

  it('hubspot: three nights on a changing export; the CRM equals rows.csv; counts in --wait, manifest and state', async () => {
    const { dir } = ctx;
    const writer = createHubspotWriter({ accessToken: hubspot.token, apiUrl: hubspot.url });
    await writer.createProperties('companies', kitFields('hubspot', 'enrich'));
    const ids = hubspot.plant(
      'companies',
      Array.from({ length: 12 }, (_, i) => ({ name: `Night Co ${i}` })),
    );
    const deleted = ids[9] as string;
    hubspot.archive('companies', deleted);
    const official = new HubspotClient({ accessToken: hubspot.token, basePath: hubspot.url }).crm.companies.batchApi;
    const truth: CrmTruth = {
      crm: 'hubspot',
      deleted: new Set([deleted]),
      locked: new Set(),
      async read(wanted) {
        const answer = await official.read({
          inputs: wanted.map((id) => ({ id })),
          properties: WRITTEN.map((c) => crmFieldName('hubspot', c)),
          propertiesWithHistory: [],
        });
        return new Map(answer.results.map((r) => [r.id, r.properties as Record<string, unknown>]));
      },
    };
    const record = (i: number, site = `night-wb-co${i}.com`): ExportRecord => ({
      id: ids[i] as string,
      website: `https://www.${site}`,
      industry: 'Software',
    });
    const input = await writeExport(
      dir,
      Array.from({ length: 10 }, (_, i) => record(i)),
    );
    const output = new URL('hubspot-out', input.replace(/[^/]+$/, '')).href;
    const created = await cli(
      ...['create', '--name', 'wb-hubspot', '--kind', 'enrich', '--input', input, '--output', output],
      ...['--every', '1d', '--paused', '--limit', '5', '--write-back', 'hubspot'],
    );
    expect(created.code).toBe(0);

    // Night 1: every record is new; the deleted one is refused by HubSpot, the other nine written.
    const first = await night('wb-hubspot', output, truth, []);
    expect(first.result).toMatchObject({ crm: 'hubspot', object: 'companies', written: 9, rejected: 1 });
    const state1 = await cli<{ writeBack: Record<string, unknown> }>('state', 'wb-hubspot');
    expect(state1.out.writeBack).toMatchObject({
      pending: 0,
      refused: 1,
      confirmed: 9,
      lastNight: { written: 9, rejected: 1, notAttempted: 0, carried: 0, pending: 0 },
    });

    // Night 2: record 0 gone from the export (never touched again), two new ones, record 3 moved to another site.
    const gone = ids[0] as string;
    const goneBefore = (await truth.read([gone])).get(gone);
    await writeExport(dir, [
      ...Array.from({ length: 9 }, (_, i) => record(i + 1, i === 2 ? 'night-wb-moved.com' : undefined)),
      record(10),
      record(11),
    ]);
    const second = await night('wb-hubspot', output, truth, first.pending);
    expect(second.result.written).toBeGreaterThanOrEqual(2);
    expect((await truth.read([gone])).get(gone)).toEqual(goneBefore);

    // Night 3: nothing changed in the export: nothing to write, nothing sent.
    const updates = () => hubspot.calls().filter((c) => c.path.endsWith('/batch/update')).length;
    const before3 = updates();
    const third = await night('wb-hubspot', output, truth, second.pending);
    expect(third.result).toMatchObject({ written: 0, rejected: 0, pending: 0 });
    expect(updates()).toBe(before3);
    const state3 = await cli<{ writeBack: { lastNight: { runId: string } } }>('state', 'wb-hubspot');
    expect(state3.out.writeBack.lastNight.runId).toBe(
      (await cli<{ committedBy: string }>('state', 'wb-hubspot')).out.committedBy,
    );
    expect((await cli('delete', 'wb-hubspot')).code).toBe(0);
  });

  it('salesforce: three nights; a locked row is rejected, left pending and carried into the next night; deleted reported once; a gone record never touched', async () => {
    const { dir } = ctx;
    const ids = salesforce.records.seed(
      'Account',
      Array.from({ length: 8 }, (_, i) => ({ Name: `Sf Night ${i}` })),
    );
    const [deleted, locked] = [ids[6] as string, ids[7] as string];
    salesforce.records.markDeleted(deleted);
    salesforce.records.lock(locked, 1);
    const jsforce = new Connection({
      instanceUrl: salesforce.url,
      accessToken: salesforce.accessToken,
      version: salesforce.version,
    });
    const truth = {
      crm: 'salesforce' as const,
      deleted: new Set([deleted]),
      locked: new Set([locked]),
      async read(wanted: string[]) {
        const read = (await jsforce.sobject('Account').retrieve(wanted)) as unknown as Record<string, unknown>[];
        return new Map(read.map((r) => [r['Id'] as string, r]));
      },
    };
    const record = (i: number, site = `sf-night-co${i}.com`): ExportRecord => ({
      id: ids[i] as string,
      website: `https://www.${site}`,
      industry: 'Retail',
    });
    const sfDir = `${dir}/sf`;
    await mkdir(sfDir, { recursive: true });
    const input = await writeExport(
      sfDir,
      Array.from({ length: 8 }, (_, i) => record(i)),
    );
    const output = new URL('salesforce-out', input.replace(/[^/]+$/, '')).href;
    const created = await cli(
      ...['create', '--name', 'wb-salesforce', '--kind', 'enrich', '--input', input, '--output', output],
      ...['--every', '1d', '--paused', '--limit', '5', '--write-back', 'salesforce'],
    );
    expect(created.code).toBe(0);

    const first = await night('wb-salesforce', output, truth, []);
    expect(first.result).toMatchObject({ object: 'Account', written: 6, rejected: 2, transient: 1, pending: 1 });
    expect((await cli<{ writeBack: unknown }>('state', 'wb-salesforce')).out.writeBack).toMatchObject({
      pending: 1,
      refused: 1,
    });

    // Night 2: the lock is gone; the locked row goes first (carried), with tonight's one change.
    const unlocked = { ...truth, locked: new Set<string>() };
    await writeExport(
      sfDir,
      Array.from({ length: 8 }, (_, i) => record(i, i === 1 ? 'sf-night-moved.com' : undefined)),
    );
    const second = await night('wb-salesforce', output, unlocked, first.pending);
    expect(second.result).toMatchObject({ carried: 1, pending: 0 });
    expect((await cli<{ writeBack: unknown }>('state', 'wb-salesforce')).out.writeBack).toMatchObject({
      pending: 0,
      refused: 1,
      lastNight: { carried: 1, pending: 0 },
    });

    // Night 3: record 0 gone from the export (never touched again), record 2 moved to another site; the deleted
    // record, unchanged, is not asked again.
    const gone = ids[0] as string;
    const goneBefore = (await truth.read([gone])).get(gone);
    const moved = (i: number) => (i === 1 ? 'sf-night-moved.com' : i === 2 ? 'sf-night-moved-again.com' : undefined);
    await writeExport(
      sfDir,
      Array.from({ length: 7 }, (_, i) => record(i + 1, moved(i + 1))),
    );
    const third = await night('wb-salesforce', output, unlocked, second.pending);
    expect(third.result).toMatchObject({ rejected: 0, carried: 0, pending: 0 });
    expect(third.result.written).toBeGreaterThanOrEqual(1);
    expect((await truth.read([gone])).get(gone)).toEqual(goneBefore);
    expect((await cli('delete', 'wb-salesforce')).code).toBe(0);
  });

  /** `signal-kit schedule …` as a user runs it: its exit code and what it printed. */
  async function signalKit(argv: string[]): Promise<{ code: number; out: string }> {
    const lines: string[] = [];
    const log = vi.spyOn(console, 'log').mockImplementation((...args) => void lines.push(args.join(' ')));
    const error = vi.spyOn(console, 'error').mockImplementation((...args) => void lines.push(args.join(' ')));
    const temporal = ctx.env.childEnv();
    const before = { ...process.env };
    Object.assign(process.env, temporal);
    try {
      return { code: await runCli(['schedule', ...argv], 'test'), out: lines.join('\n') };
    } finally {
      for (const key of Object.keys(process.env)) if (!(key in before)) delete process.env[key];
      Object.assign(process.env, before);
      log.mockRestore();
      error.mockRestore();
    }
  }

  it('create refuses a missing field and a missing scope with exit 2, naming them, and makes no schedule', async () => {
    const { dir } = ctx;
    const hsDir = `${dir}/preflight`;
    await mkdir(hsDir, { recursive: true });
    const input = await writeExport(hsDir, [{ id: '1', website: 'preflight-co.com', industry: 'x' }]);
    const output = new URL('preflight-out', input.replace(/[^/]+$/, '')).href;
    const create = ['create', '--kind', 'enrich', '--input', input, '--output', output, '--every', '1d', '--paused'];
    const updates = () => hubspot.calls().filter((c) => c.path.endsWith('/batch/update')).length;
    const updatesBefore = updates();

    // signals_news has no property in HubSpot (only the default fields were created).
    const field = await signalKit([
      ...create,
      ...['--name', 'wb-no-field', '--write-back', 'hubspot', '--write-fields', 'signal_count,signals_news'],
    ]);
    expect(field.code, field.out).toBe(2);
    expect(field.out).toMatch(/signals_news: no such field on companies/);
    expect(field.out).toMatch(/crm fields --create hubspot/);
    await expect(cli('describe', 'wb-no-field')).rejects.toThrow(/no schedule named "wb-no-field"/);

    const good = process.env['HUBSPOT_ACCESS_TOKEN'];
    const readOnly = hubspot.addToken(['crm.objects.companies.read', 'crm.schemas.companies.read']);
    process.env['HUBSPOT_ACCESS_TOKEN'] = readOnly;
    try {
      const scope = await signalKit([...create, '--name', 'wb-no-scope', '--write-back', 'hubspot']);
      expect(scope.code, scope.out).toBe(2);
      expect(scope.out).toMatch(/crm\.objects\.companies\.write/);
      expect(scope.out).not.toContain(readOnly);
    } finally {
      process.env['HUBSPOT_ACCESS_TOKEN'] = good;
    }
    await expect(cli('describe', 'wb-no-scope')).rejects.toThrow(/no schedule named "wb-no-scope"/);
    expect(updates()).toBe(updatesBefore);

    // --skip-crm-check: made without asking the CRM (the night's own pre-flight still stands guard).
    const skipped = await signalKit([
      ...create,
      ...['--name', 'wb-skip', '--write-back', 'hubspot', '--write-fields', 'signals_news', '--skip-crm-check'],
    ]);
    expect(skipped.code, skipped.out).toBe(0);
    expect((await cli('delete', 'wb-skip')).code).toBe(0);
  });
});
