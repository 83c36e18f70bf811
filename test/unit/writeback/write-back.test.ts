/**
 * A night's write-back against an in-memory CRM behind the writer interface: what it writes is exactly changes.csv
 * (and what earlier nights left pending), typed for each field; every record accounted for; exactly once in effect
 * through a cut write, an outage and a repeated activity; `fill-empty` never replaces a value a person set; the
 * pre-flight refuses a missing field or scope before any write. The truth is each night's rows.csv as written here.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { syncChangesKey, syncManifestKey, syncRowsKey } from '../../../activities/sync/layout.ts';
import type { SyncRunRef } from '../../../activities/sync/types.ts';
import { closeLedger, readLedger, writeBackState } from '../../../activities/writeback/ledger.ts';
import { owedNights } from '../../../activities/writeback/owed.ts';
import { writeBackReportKey } from '../../../activities/writeback/report.ts';
import type { WriteBackRequest } from '../../../activities/writeback/types.ts';
import { writeBackNight } from '../../../activities/writeback/write-back.ts';
import { CrmAuthError, CrmPreflightError } from '../../../connectors/errors.ts';
import { openStoreWith, type Store } from '../../../connectors/storage/index.ts';
import { SyncManifestSchema } from '../../../contract/manifest-schemas.ts';
import { FakeCrm, FIELD } from './fake-crm.ts';

const HEADER = [
  'Id',
  'Name',
  'Signal_Row__c',
  'Signal_Status__c',
  'Signal_Count__c',
  'Signal_Latest_Signal_At__c',
  'Signal_Latest_Signal_Type__c',
  'Signal_Latest_Signal_Summary__c',
];
const WRITTEN = HEADER.slice(3);

type Row = [id: string, count: number, at: string, type: string, summary: string];

let dir: string;
let store: Store;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'signal-kit-writeback-'));
  store = openStoreWith(`file://${dir}`, () => {
    throw new Error('no bucket in this test');
  });
});
afterEach(async () => rm(dir, { recursive: true, force: true }));

function salesforce(): FakeCrm {
  const crm = new FakeCrm('salesforce', [
    FIELD('Signal_Status__c', 'string', 40),
    FIELD('Signal_Count__c', 'number'),
    FIELD('Signal_Latest_Signal_At__c', 'datetime'),
    FIELD('Signal_Latest_Signal_Type__c', 'string', 80),
    FIELD('Signal_Latest_Signal_Summary__c', 'string', 32),
    FIELD('Name', 'string', 255),
  ]);
  for (const id of ['001A', '001B', '001C', '001D', '001E', '001F']) crm.records.set(id, { Name: `Acme ${id}` });
  return crm;
}

const runOf = (night: number): SyncRunRef => ({
  name: 'nightly',
  output: `file://${dir}`,
  runId: `2026120${night}T020000Z`,
  date: `2026-12-0${night}`,
  at: `2026-12-0${night}T02:00:00.000Z`,
});

const csv = (rows: string[][]) =>
  `${[HEADER, ...rows].map((r) => r.map((c) => (/[",]/.test(c) ? `"${c.replaceAll('"', '""')}"` : c)).join(',')).join('\r\n')}\r\n`;

const line = ([id, count, at, type, summary]: Row, index: number): string[] => [
  id,
  `Acme ${id}`,
  String(index + 1),
  'ok',
  String(count),
  at,
  type,
  summary,
];

/** Writes a night's rows.csv (every record) and changes.csv (those whose enrichment differs from `before`). */
async function night(n: number, rows: Row[], before: Row[] = [], also: string[] = []): Promise<SyncRunRef> {
  const run = runOf(n);
  const old = new Map(before.map((r) => [r[0], JSON.stringify(r)]));
  const lines = rows.map(line);
  const changed = lines.filter(
    (_, i) => old.get(rows[i]![0]) !== JSON.stringify(rows[i]) || also.includes(rows[i]![0]),
  );
  await store.writeText(syncRowsKey(run), csv(lines));
  await store.writeText(syncChangesKey(run), csv(changed));
  return run;
}

const request = (run: SyncRunRef, extra: Partial<WriteBackRequest> = {}): WriteBackRequest => ({
  run,
  kind: 'enrich',
  crm: 'salesforce',
  ...extra,
});

/** The CRM equals rows.csv for every written field (text cut to its field's length), for the ids given. */
async function expectCrmEqualsRows(crm: FakeCrm, run: SyncRunRef, ids: string[]) {
  const rows = parse(await store.readText(syncRowsKey(run)), { columns: true, bom: true }) as Record<string, string>[];
  for (const row of rows.filter((r) => ids.includes(r['Id'] as string))) {
    const record = crm.records.get(row['Id'] as string) ?? {};
    const cell = (name: string) => (row[name] === '' ? null : (row[name] as string));
    const at = cell('Signal_Latest_Signal_At__c');
    const summary = cell('Signal_Latest_Signal_Summary__c');
    expect(record['Signal_Status__c'], row['Id']).toBe(cell('Signal_Status__c'));
    expect(record['Signal_Count__c'], row['Id']).toBe(Number(row['Signal_Count__c']));
    expect(record['Signal_Latest_Signal_At__c']).toBe(at === null ? null : new Date(at).toISOString());
    expect(record['Signal_Latest_Signal_Type__c']).toBe(cell('Signal_Latest_Signal_Type__c'));
    expect(record['Signal_Latest_Signal_Summary__c']).toBe(
      summary === null ? null : [...summary].slice(0, 32).join(''),
    );
  }
}

async function report(run: SyncRunRef): Promise<Record<string, string>[]> {
  return parse(await store.readText(writeBackReportKey(run)), { columns: true, bom: true });
}

const NIGHT1: Row[] = [
  ['001A', 3, '2026-11-30T10:00:00Z', 'hiring', 'Acme is hiring 30 engineers in Berlin this winter'],
  ['001B', 1, '2026-11-29T09:00:00Z', 'funding', 'Series B'],
  ['001C', 0, '', '', ''],
  ['001D', 2, '2026-11-28T08:00:00Z', 'news', 'Deleted in the CRM'],
  ['001E', 5000, '2026-11-27T07:00:00Z', 'news', 'Validation rule refuses it'],
  ['001F', 7, '2026-11-26T06:00:00Z', 'hiring', 'Row locked tonight'],
];

describe('write-back of a night', () => {
  it('three nights: exactly the changes written, every record reported, the CRM equal to rows.csv', async () => {
    const crm = salesforce();
    crm.deleted.add('001D');
    crm.invalid.add('001E');
    crm.locked.set('001F', 1);
    const run1 = await night(1, NIGHT1);
    const first = await writeBackNight({ store, writer: crm }, request(run1));
    expect(first).toMatchObject({
      object: 'Account',
      written: 3,
      rejected: 3,
      transient: 1,
      notAttempted: 0,
      pending: 1,
    });
    expect(first.truncated).toBe(1);
    await expectCrmEqualsRows(crm, run1, ['001A', '001B', '001C']);
    const rep1 = await report(run1);
    expect(rep1.map((r) => [r['Id'], r['outcome'], r['crm_code']])).toEqual([
      ['001A', 'written', ''],
      ['001B', 'written', ''],
      ['001C', 'written', ''],
      ['001D', 'rejected', 'ENTITY_IS_DELETED'],
      ['001E', 'rejected', 'FIELD_CUSTOM_VALIDATION_EXCEPTION'],
      ['001F', 'rejected', 'UNABLE_TO_LOCK_ROW'],
    ]);

    // Night 2: A changed; F (locked last night) goes first; D and E are not tried again (the values they were refused
    // did not change), not even D, in changes.csv again for a column the write-back does not write.
    const night2: Row[] = NIGHT1.map((r) =>
      r[0] === '001A' ? ['001A', 4, '2026-12-01T10:00:00Z', 'news', 'New office'] : r,
    );
    const run2 = await night(2, night2, NIGHT1, ['001D']);
    const second = await writeBackNight({ store, writer: crm }, request(run2));
    expect(second).toMatchObject({ written: 2, rejected: 0, carried: 1, pending: 0 });
    expect((await report(run2)).map((r) => r['Id'])).toEqual(['001A', '001F']);
    await expectCrmEqualsRows(crm, run2, ['001A', '001B', '001C', '001F']);

    // Night 3: E's values change and the rule lets them through; nothing else is sent.
    crm.invalid.delete('001E');
    const night3: Row[] = night2.map((r) =>
      r[0] === '001E' ? ['001E', 12, '2026-12-02T07:00:00Z', 'news', 'Fixed'] : r,
    );
    const run3 = await night(3, night3, night2);
    const third = await writeBackNight({ store, writer: crm }, request(run3));
    expect(third).toMatchObject({ written: 1, rejected: 0, pending: 0 });
    await expectCrmEqualsRows(crm, run3, ['001A', '001B', '001C', '001E', '001F']);
    expect([...crm.received.entries()].sort()).toEqual([
      ['001A', 2],
      ['001B', 1],
      ['001C', 1],
      ['001E', 1],
      ['001F', 1],
    ]);
  });

  it('a write cut after its ingest job was created is resumed by the job: no second job, each change once', async () => {
    const crm = salesforce();
    const run = await night(1, NIGHT1.slice(0, 3));
    crm.cutAfterCheckpoint = true;
    await expect(writeBackNight({ store, writer: crm }, request(run))).rejects.toThrow(/killed/);
    const ledger = await readLedger(store, 'nightly');
    expect([...ledger.records.allPending()].map(([id]) => id)).toEqual(['001A', '001B', '001C']);
    await closeLedger(ledger);
    const result = await writeBackNight({ store, writer: crm }, request(run));
    expect(result).toMatchObject({ written: 3, pending: 0 });
    expect(crm.jobs).toBe(1);
    expect([...crm.received.values()]).toEqual([1, 1, 1]);
    // The activity repeated after it finished: its result, no CRM call.
    const calls = crm.writeCalls;
    expect(await writeBackNight({ store, writer: crm }, request(run))).toEqual(result);
    expect(crm.writeCalls).toBe(calls);
  });

  it('an outage leaves the night pending; the next night writes it first, and a gone record never', async () => {
    const crm = salesforce();
    const run1 = await night(1, NIGHT1.slice(0, 3));
    crm.outage = true;
    await expect(writeBackNight({ store, writer: crm }, request(run1))).rejects.toThrow(/503/);
    // Night 2 comes before anyone runs night 1 again: C is gone from the export, B unchanged.
    const run2 = await night(2, NIGHT1.slice(0, 2), NIGHT1.slice(0, 3));
    const result = await writeBackNight({ store, writer: crm }, request(run2));
    expect(result).toMatchObject({ written: 2, carried: 2, pending: 0 });
    expect(crm.received.get('001C')).toBeUndefined();
    await expectCrmEqualsRows(crm, run2, ['001A', '001B']);
  });

  it('a write-back refused before its changes reached the ledger (an expired token at its pre-flight): the next night writes them first, once', async () => {
    const crm = salesforce();
    const run1 = await night(1, NIGHT1.slice(0, 3));
    const check = crm.check.bind(crm);
    crm.check = () => Promise.reject(new CrmAuthError('salesforce', 'INVALID_SESSION_ID', 'the session expired'));
    await expect(writeBackNight({ store, writer: crm }, request(run1))).rejects.toThrow(/INVALID_SESSION_ID/);
    crm.check = check;
    // schedule state names the night owed: 0 pending alone would read as nothing left to write.
    expect(await writeBackState(store, 'nightly')).toMatchObject({ pending: 0, owedNights: [run1.runId] });
    // Night 2 has no change of its own: night 1's are still owed, and written now.
    const run2 = await night(2, NIGHT1.slice(0, 3), NIGHT1.slice(0, 3));
    const result = await writeBackNight({ store, writer: crm }, request(run2));
    expect(result).toMatchObject({ written: 3, carried: 3, pending: 0 });
    expect([...crm.received.values()]).toEqual([1, 1, 1]);
    await expectCrmEqualsRows(crm, run2, ['001A', '001B', '001C']);
    const ledger = await readLedger(store, 'nightly');
    expect(owedNights(ledger)).toEqual([]);
    await closeLedger(ledger);
    expect(await writeBackState(store, 'nightly')).toMatchObject({ owedNights: [] });
  });

  it('fill-empty never replaces a value set in the CRM between nights; the kit still updates its own', async () => {
    const crm = salesforce();
    const policies = {
      signal_latest_signal_type: 'fill-empty' as const,
      Signal_Latest_Signal_Type__c: 'fill-empty' as const,
    };
    crm.records.get('001B')!['Signal_Latest_Signal_Type__c'] = 'typed by a person';
    const run1 = await night(1, NIGHT1.slice(0, 2));
    await writeBackNight(
      { store, writer: crm },
      request(run1, { policies: { latest_signal_type: 'fill-empty', ...policies } }),
    );
    expect(crm.records.get('001A')!['Signal_Latest_Signal_Type__c']).toBe('hiring');
    expect(crm.records.get('001B')!['Signal_Latest_Signal_Type__c']).toBe('typed by a person');
    // Between nights a person types A's value; night 2 changes both A and B.
    crm.records.get('001A')!['Signal_Latest_Signal_Type__c'] = 'a person again';
    const night2: Row[] = [
      ['001A', 9, '2026-12-01T10:00:00Z', 'funding', 'x'],
      ['001B', 9, '2026-12-01T10:00:00Z', 'funding', 'y'],
    ];
    const run2 = await night(2, night2, NIGHT1.slice(0, 2));
    await writeBackNight({ store, writer: crm }, request(run2, { policies: { latest_signal_type: 'fill-empty' } }));
    expect(crm.records.get('001A')!['Signal_Latest_Signal_Type__c']).toBe('a person again');
    expect(crm.records.get('001B')!['Signal_Latest_Signal_Type__c']).toBe('typed by a person');
    expect(crm.records.get('001A')!['Signal_Count__c']).toBe(9);
    // The kit's own value (A's, before the person) is replaced by the kit: C empty → written, then updated.
    const run3 = await night(3, [['001C', 1, '2026-12-02T10:00:00Z', 'news', 'z']]);
    await writeBackNight({ store, writer: crm }, request(run3, { policies: { latest_signal_type: 'fill-empty' } }));
    const run4 = await night(4, [['001C', 2, '2026-12-03T10:00:00Z', 'hiring', 'z']]);
    await writeBackNight({ store, writer: crm }, request(run4, { policies: { latest_signal_type: 'fill-empty' } }));
    expect(crm.records.get('001C')!['Signal_Latest_Signal_Type__c']).toBe('hiring');
  });

  it('a missing field and a missing scope are refused before any write, naming them', async () => {
    const crm = salesforce();
    crm.fields = crm.fields.filter((f) => f.name !== 'Signal_Count__c');
    const run = await night(1, NIGHT1.slice(0, 2));
    const error = await writeBackNight({ store, writer: crm }, request(run)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CrmPreflightError);
    expect((error as CrmPreflightError).problems.map((p) => p.what)).toEqual(['Signal_Count__c']);
    crm.missingScopes = ['api'];
    const scope = await writeBackNight({ store, writer: crm }, request(run)).catch((e: unknown) => e);
    expect((scope as Error).message).toMatch(/scope api/);
    expect(crm.writeCalls).toBe(0);
    expect(await store.exists(writeBackReportKey(run))).toBe(false);
  });

  it('the written fields are the columns asked (HubSpot names for HubSpot), the rest untouched', async () => {
    const crm = new FakeCrm('hubspot', [FIELD('signal_count', 'number'), FIELD('signal_status', 'string')]);
    crm.records.set('001A', {});
    const run = await night(1, NIGHT1.slice(0, 1));
    const result = await writeBackNight(
      { store, writer: crm },
      request(run, { crm: 'hubspot', fields: ['signal_count'] }),
    );
    expect(result).toMatchObject({ object: 'companies', written: 1 });
    expect(crm.records.get('001A')).toEqual({ signal_count: 3 });
    expect(WRITTEN).toContain('Signal_Count__c');
  });
});

/** The manifest the night's finalize wrote before its write-back (the fields the contract asks, nothing paid). */
function nightManifest(run: SyncRunRef) {
  const zero = { input_rows: 0, records: 0, ok: 0, not_found: 0, error: 0, invalid: 0, companies: 0 };
  return {
    ...{ schema_version: 2, kind: 'crm-sync', name: run.name, run_id: run.runId, dt: run.date },
    ...{ scheduled_at: run.at, started_at: run.at, finished_at: run.at, status: 'completed' },
    ...{ input: 'file:///exports/accounts.csv', output: store.url },
    counts: { ...zero, new_companies: 0, new_signals: 0 },
    records: { total: 0, new: 0, changed: 0, unchanged: 0, gone: 0, new_ids: [], changed_ids: [], gone_ids: [] },
    ...{ credits_charged: 0, unsaved_answers: { credits: 0, unknown_calls: 0 }, overlap: { credits: 0 }, calls: 0 },
    ...{ batches: { total: 0, done: 0 }, parts: [], state: { key: 'nightly/_state.json', from_run: null } },
  };
}

describe("the night's manifest", () => {
  it('says why a write-back failed and what stays pending, then the counts once a retry writes it', async () => {
    const crm = salesforce();
    const run = await night(1, NIGHT1.slice(0, 3));
    const key = syncManifestKey(run);
    await store.writeText(key, JSON.stringify(nightManifest(run)));
    crm.outage = true;
    await expect(writeBackNight({ store, writer: crm }, request(run))).rejects.toThrow();
    const failed = SyncManifestSchema.parse(JSON.parse(await store.readText(key)));
    expect(failed.write_back).toMatchObject({ crm: 'salesforce', status: 'failed', pending: 3 });
    expect(failed.write_back?.error).toMatch(/\w/);

    const result = await writeBackNight({ store, writer: crm }, request(run));
    const done = SyncManifestSchema.parse(JSON.parse(await store.readText(key)));
    expect(done.write_back).toMatchObject({ status: 'done', written: 3, rejected: 0, not_attempted: 0, pending: 0 });
    expect(done.write_back?.error).toBeUndefined();
    expect(done.write_back?.report?.key).toBe(writeBackReportKey(run));
    expect(done.write_back?.report?.lines).toBe(3);
    expect(result.written).toBe(3);
  });
});
