/**
 * A night's write-back through the kit's own writers into the CRM stand-ins, read back with the official clients
 * (`@hubspot/api-client`, `jsforce`): the CRM equals rows.csv for every written field after each of three nights;
 * a deleted record, a validation rule and a locked row each reported per record and the rest written; fill-empty
 * never replaces a person's value; a write cut after its ingest job was created carries that job on (no second one).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@hubspot/api-client';
import { parse } from 'csv-parse/sync';
import { Connection } from 'jsforce';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { syncChangesKey, syncRowsKey } from '../../activities/sync/layout.ts';
import type { SyncRunRef } from '../../activities/sync/types.ts';
import { kitFields } from '../../activities/writeback/fields.ts';
import { closeLedger, readLedger } from '../../activities/writeback/ledger.ts';
import { writeBackReportKey } from '../../activities/writeback/report.ts';
import { writeBackNight } from '../../activities/writeback/write-back.ts';
import { createHubspotWriter } from '../../connectors/crm/hubspot/index.ts';
import { createSalesforceWriter } from '../../connectors/crm/salesforce/index.ts';
import type { CrmWriter } from '../../connectors/crm/writer.ts';
import { openStoreWith, type Store } from '../../connectors/storage/index.ts';
import { startHubspotStandIn } from '../../crm-sandbox/hubspot/index.ts';
import { startSalesforceStandIn } from '../../crm-sandbox/salesforce/index.ts';

/** A night's enrichment of one record: count, newest signal's time, type, summary. */
type Pic = [count: number, at: string, type: string, summary: string];

let dir: string;
let store: Store;
const closers: (() => Promise<void>)[] = [];
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'signal-kit-crm-wb-'));
  store = openStoreWith(`file://${dir}`, () => {
    throw new Error('no bucket here');
  });
});
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
  await rm(dir, { recursive: true, force: true });
});

const runOf = (n: number): SyncRunRef => ({
  name: 'nightly',
  output: `file://${dir}`,
  runId: `2026120${n}T020000Z`,
  date: `2026-12-0${n}`,
  at: `2026-12-0${n}T02:00:00.000Z`,
});

/** The enrichment columns under each dialect's names (labels for HubSpot's `Record ID`, API names for `Id`). */
const COLUMNS = {
  labels: [
    'Signal Status',
    'Signal Count',
    'Signal Latest Signal At',
    'Signal Latest Signal Type',
    'Signal Latest Signal Summary',
  ],
  salesforce: [
    'Signal_Status__c',
    'Signal_Count__c',
    'Signal_Latest_Signal_At__c',
    'Signal_Latest_Signal_Type__c',
    'Signal_Latest_Signal_Summary__c',
  ],
};
const quote = (c: string) => (/[",\r\n]/.test(c) ? `"${c.replaceAll('"', '""')}"` : c);

/** Writes rows.csv (every record) and changes.csv (those whose picture differs from `before`) of night `n`. */
async function night(n: number, idHeader: 'Record ID' | 'Id', now: Map<string, Pic>, before = new Map<string, Pic>()) {
  const run = runOf(n);
  const header = [idHeader, 'Name', ...(idHeader === 'Id' ? COLUMNS.salesforce : COLUMNS.labels)];
  const line = (id: string, p: Pic) => [id, `Co ${id}`, 'ok', String(p[0]), p[1], p[2], p[3]].map(quote).join(',');
  const all = [...now].map(([id, p]) => line(id, p));
  const changed = [...now].filter(([id, p]) => JSON.stringify(before.get(id)) !== JSON.stringify(p));
  await store.writeText(syncRowsKey(run), `${[header.join(','), ...all].join('\r\n')}\r\n`);
  await store.writeText(
    syncChangesKey(run),
    `${[header.join(','), ...changed.map(([id, p]) => line(id, p))].join('\r\n')}\r\n`,
  );
  return run;
}

/** rows.csv of a night, by id: field → cell, under the CRM's field names. */
async function truth(run: SyncRunRef, names: string[]): Promise<Map<string, Record<string, string>>> {
  const rows = parse(await store.readText(syncRowsKey(run)), { bom: true, from_line: 2 }) as string[][];
  return new Map(rows.map((r) => [r[0] as string, Object.fromEntries(names.map((n, i) => [n, r[i + 2] as string]))]));
}

const norm = (v: unknown) => {
  if (v === null || v === undefined || v === '') return '';
  const s = String(v);
  return /^\d{4}-\d{2}-\d{2}T/.test(s) ? new Date(s).toISOString() : /^-?\d+(\.0+)?$/.test(s) ? String(Number(s)) : s;
};

async function outcomes(run: SyncRunRef): Promise<string[][]> {
  const rows = parse(await store.readText(writeBackReportKey(run)), { bom: true, from_line: 2 }) as string[][];
  return rows.map((r) => [r[0] as string, r[1] as string, r[2] as string]);
}

const pic = (count: number, day: number, type: string, summary = `${type} news`): Pic => [
  count,
  `2026-11-${String(day).padStart(2, '0')}T10:00:00.000Z`,
  type,
  summary,
];

describe('write-back into the HubSpot stand-in', () => {
  it('three nights: the CRM read back with @hubspot/api-client equals rows.csv; rejections per record; fill-empty', async () => {
    const hubspot = await startHubspotStandIn({ rateLimit: { perInterval: 0 } });
    closers.push(() => hubspot.close());
    const writer = createHubspotWriter({ accessToken: hubspot.token, apiUrl: hubspot.url });
    const fields = kitFields('hubspot', 'enrich');
    await writer.createProperties('companies', fields);
    const names = fields.map((f) => f.name);
    const ids = hubspot.plant(
      'companies',
      [1, 2, 3, 4, 5].map((i) => ({ name: `Co ${i}` })),
    );
    const [a, b, c, d, e] = ids as [string, string, string, string, string];
    hubspot.archive('companies', d);
    hubspot.refuse('companies', e, {
      category: 'VALIDATION_ERROR',
      message: 'Property values were not valid',
    } as never);
    hubspot.plant('companies', []);
    const policy = { policies: { latest_signal_type: 'fill-empty' as const } };
    const official = new Client({ accessToken: hubspot.token, basePath: hubspot.url }).crm.companies.batchApi;
    const readBack = async () => {
      const answer = await official.read({
        inputs: [a, b, c].map((id) => ({ id })),
        properties: names,
        propertiesWithHistory: [],
      });
      return new Map(answer.results.map((r) => [r.id, r.properties]));
    };

    let before = new Map<string, Pic>();
    const nights = [
      new Map<string, Pic>([
        [a, pic(3, 1, 'hiring')],
        [b, pic(1, 2, 'funding')],
        [c, pic(0, 3, '')],
        [d, pic(2, 4, 'news')],
        [e, pic(5, 5, 'news')],
      ]),
      new Map<string, Pic>([
        [a, pic(4, 6, 'news')],
        [b, pic(1, 2, 'funding')],
        [c, pic(2, 7, 'hiring')],
        [d, pic(2, 4, 'news')],
        [e, pic(5, 5, 'news')],
      ]),
      new Map<string, Pic>([
        [a, pic(5, 8, 'funding')],
        [b, pic(2, 9, 'news')],
        [c, pic(2, 7, 'hiring')],
        [d, pic(2, 4, 'news')],
        [e, pic(5, 5, 'news')],
      ]),
    ];
    for (const [i, now] of nights.entries()) {
      if (i === 2) {
        // Between nights 2 and 3 a person types B's newest signal type in HubSpot: fill-empty keeps it.
        await official.update({ inputs: [{ id: b, properties: { signal_latest_signal_type: 'typed by Ana' } }] });
      }
      const run = await night(i + 1, 'Record ID', now, before);
      const result = await writeBackNight({ store, writer }, { run, kind: 'enrich', crm: 'hubspot', ...policy });
      if (i === 0) {
        expect(result).toMatchObject({ object: 'companies', written: 3, rejected: 2, transient: 0, pending: 0 });
        const report = await outcomes(run);
        expect(
          report
            .filter((r) => r[1] === 'rejected')
            .map((r) => r[0])
            .sort(),
        ).toEqual([d, e].sort());
      }
      const crm = await readBack();
      const rows = await truth(run, names);
      for (const id of [a, b, c]) {
        for (const name of names) {
          const expected =
            i === 2 && id === b && name === 'signal_latest_signal_type' ? 'typed by Ana' : rows.get(id)?.[name];
          expect(norm(crm.get(id)?.[name]), `night ${i + 1} ${id} ${name}`).toBe(norm(expected));
        }
      }
      before = now;
    }
    const updates = hubspot.calls().filter((call) => call.path.endsWith('/batch/update'));
    // The ideal: one batch update a night (ceil(n/100)), and the person's own edit.
    expect(updates.length).toBe(3 + 1);
  });
});

describe('write-back into the Salesforce stand-in', () => {
  async function org() {
    const fields = kitFields('salesforce', 'enrich');
    const custom = fields.map((f) =>
      f.type === 'number'
        ? { name: f.name, type: 'double' as const, precision: 18, scale: 0 }
        : f.type === 'datetime'
          ? { name: f.name, type: 'datetime' as const }
          : { name: f.name, type: 'string' as const, length: f.length ?? 255 },
    );
    const salesforce = await startSalesforceStandIn({ customFields: { Account: custom } });
    closers.push(() => salesforce.close());
    const ids = salesforce.records.seed(
      'Account',
      [1, 2, 3, 4, 5, 6].map((i) => ({ Name: `Co ${i}` })),
    );
    const auth = { kind: 'token' as const, instanceUrl: salesforce.url, accessToken: salesforce.accessToken };
    const writer = createSalesforceWriter(auth, { bulkThreshold: 1, ingest: { pollIntervalMs: 5 } as never });
    const jsforce = new Connection({
      instanceUrl: salesforce.url,
      accessToken: salesforce.accessToken,
      version: salesforce.version,
    });
    return { salesforce, ids, writer, jsforce, names: fields.map((f) => f.name) };
  }

  it('a deleted record, a validation rule and a locked row reported per record; the rest equal rows.csv via jsforce', async () => {
    const { salesforce, ids, writer, jsforce, names } = await org();
    const [a, b, c, d, e, f] = ids as [string, string, string, string, string, string];
    salesforce.records.markDeleted(d);
    salesforce.records.addValidationRule({
      object: 'Account',
      message: 'Signal Count must be below 1000',
      rejects: (record) => Number(record['Signal_Count__c'] ?? 0) >= 1000,
    });
    salesforce.records.lock(f, 1);
    const now1 = new Map<string, Pic>([
      [a, pic(3, 1, 'hiring')],
      [b, pic(1, 2, 'funding')],
      [c, pic(0, 3, '')],
      [d, pic(2, 4, 'news')],
      [e, pic(5000, 5, 'news')],
      [f, pic(7, 6, 'hiring')],
    ]);
    const run1 = await night(1, 'Id', now1);
    const first = await writeBackNight({ store, writer }, { run: run1, kind: 'enrich', crm: 'salesforce' });
    expect(first).toMatchObject({ object: 'Account', written: 3, rejected: 3, transient: 1, pending: 1 });
    const codes = new Map((await outcomes(run1)).map((r) => [r[0], r[2]]));
    expect(codes.get(d)).toBe('ENTITY_IS_DELETED');
    expect(codes.get(e)).toBe('FIELD_CUSTOM_VALIDATION_EXCEPTION');
    expect(codes.get(f)).toBe('UNABLE_TO_LOCK_ROW');
    // Night 2 writes F (left pending) first, with A's change; nothing else.
    const now2 = new Map(now1).set(a, pic(4, 7, 'news'));
    const run2 = await night(2, 'Id', now2, now1);
    expect(await writeBackNight({ store, writer }, { run: run2, kind: 'enrich', crm: 'salesforce' })).toMatchObject({
      written: 2,
      carried: 1,
      pending: 0,
    });
    const rows = await truth(run2, names);
    const read = (await jsforce.sobject('Account').retrieve([a, b, c, f])) as unknown as Record<string, unknown>[];
    for (const record of read) {
      for (const name of names)
        expect(norm(record[name]), `${record['Id']} ${name}`).toBe(norm(rows.get(record['Id'] as string)?.[name]));
    }
  });

  it('a write cut after its ingest job was created carries the same job on: no second job, each change once', async () => {
    const { salesforce, ids, writer } = await org();
    const now = new Map<string, Pic>(ids.slice(0, 3).map((id, i) => [id, pic(i + 1, i + 1, 'hiring')]));
    const run = await night(1, 'Id', now);
    // The worker dies right after the job's id is saved, before its upload.
    const dying: CrmWriter = {
      crm: 'salesforce',
      check: (o) => writer.check(o),
      describe: (o) => writer.describe(o),
      read: (o, i, f) => writer.read(o, i, f),
      write: (request) =>
        writer.write({
          ...request,
          onCheckpoint: async (checkpoint) => {
            await request.onCheckpoint?.(checkpoint);
            if ('jobId' in checkpoint) throw new Error('worker killed mid-upload');
          },
        }),
    };
    await expect(writeBackNight({ store, writer: dying }, { run, kind: 'enrich', crm: 'salesforce' })).rejects.toThrow(
      /killed/,
    );
    expect(salesforce.ingestJobsCreated).toBe(1);
    const ledger = await readLedger(store, 'nightly');
    expect(ledger.records.count('pending')).toBe(3);
    await closeLedger(ledger);
    const result = await writeBackNight({ store, writer }, { run, kind: 'enrich', crm: 'salesforce' });
    expect(result).toMatchObject({ written: 3, pending: 0 });
    expect(salesforce.ingestJobsCreated).toBe(1);
    for (const [id, p] of now) expect(salesforce.records.get(id)?.['Signal_Count__c']).toBe(p[0]);
  });
});
