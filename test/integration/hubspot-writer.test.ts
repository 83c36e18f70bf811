/**
 * The kit's HubSpot writer (connectors/crm/hubspot/) against the HubSpot stand-in, its results read back with the
 * official client. Counts are the ideal from the stand-in's truth: ceil(n / 100) batch calls for n records.
 */
import { Client } from '@hubspot/api-client';
import { afterEach, describe, expect, it } from 'vitest';
import { createHubspotWriter, type HubspotWriter } from '../../connectors/crm/hubspot/index.ts';
import type { CrmRecordUpdate, CrmWriteOutcome } from '../../connectors/crm/writer.ts';
import { CrmAuthError } from '../../connectors/errors.ts';
import {
  type HubspotStandIn,
  type HubspotStandInOptions,
  startHubspotStandIn,
} from '../../crm-sandbox/hubspot/index.ts';

const FAST = { serverRetryDelaysMs: [5, 5, 5] };
let standIns: HubspotStandIn[] = [];

async function standIn(options: HubspotStandInOptions = {}): Promise<HubspotStandIn> {
  const started = await startHubspotStandIn({ rateLimit: { perInterval: 0 }, ...options });
  standIns.push(started);
  return started;
}

afterEach(async () => {
  await Promise.all(standIns.map((s) => s.close()));
  standIns = [];
});

function writerOf(hubspot: HubspotStandIn, token = hubspot.token): HubspotWriter {
  return createHubspotWriter({ accessToken: token, apiUrl: hubspot.url }, FAST);
}

function companies(hubspot: HubspotStandIn, n: number): string[] {
  return hubspot.plant(
    'companies',
    Array.from({ length: n }, (_, i) => ({ name: `Company ${i}`, domain: `c${i}.example` })),
  );
}

/** Reads the records back through the official client, 100 a call. */
async function readBack(hubspot: HubspotStandIn, ids: string[], properties: string[]) {
  const api = new Client({ accessToken: hubspot.token, basePath: hubspot.url }).crm.companies.batchApi;
  const found = new Map<string, Record<string, string | null>>();
  for (let i = 0; i < ids.length; i += 100) {
    const answer = await api.read({
      inputs: ids.slice(i, i + 100).map((id) => ({ id })),
      properties,
      propertiesWithHistory: [],
    });
    for (const r of answer.results) found.set(r.id, r.properties);
  }
  return found;
}

const byOutcome = (outcomes: CrmWriteOutcome[], outcome: CrmWriteOutcome['outcome']) =>
  outcomes.filter((o) => o.outcome === outcome).map((o) => o.id);

const updateCalls = (hubspot: HubspotStandIn) => hubspot.calls().filter((c) => c.path.endsWith('/batch/update'));

describe('the HubSpot writer', () => {
  it('writes 250 records in 3 batch calls, and they read back equal through the official client', async () => {
    const hubspot = await standIn();
    const ids = companies(hubspot, 250);
    const updates: CrmRecordUpdate[] = ids.map((id, i) => ({
      id,
      values: { numberofemployees: i * 3, description: `note ${i}`, is_public: i % 2 === 0, founded_year: null },
    }));
    const writer = writerOf(hubspot);
    const outcomes = await writer.write({ object: 'companies', updates });
    expect(byOutcome(outcomes, 'written').sort()).toEqual([...ids].sort());
    expect(updateCalls(hubspot)).toHaveLength(Math.ceil(250 / 100));
    expect(writer.calls).toBe(3);
    const back = await readBack(hubspot, ids, ['numberofemployees', 'description', 'is_public', 'founded_year']);
    for (const [i, id] of ids.entries()) {
      expect(back.get(id)).toMatchObject({
        numberofemployees: String(i * 3),
        description: `note ${i}`,
        is_public: String(i % 2 === 0),
        founded_year: null,
      });
    }
  });

  it('turns a 207 with a deleted record and validation errors into per-record rejections, and writes the rest', async () => {
    const hubspot = await standIn();
    const ids = companies(hubspot, 120);
    const [deleted, ruled, badValue] = [ids[3], ids[50], ids[110]] as [string, string, string];
    hubspot.archive('companies', deleted);
    hubspot.refuse('companies', ruled, { category: 'VALIDATION_ERROR', message: 'City must be set for EU accounts' });
    const updates = ids.map((id) => ({ id, values: { numberofemployees: id === badValue ? 'lots' : 42 } }));
    const outcomes = await writerOf(hubspot).write({ object: 'companies', updates });
    const rejections = new Map(outcomes.filter((o) => o.outcome === 'rejected').map((o) => [o.id, o]));
    expect([...rejections.keys()].sort()).toEqual([deleted, ruled, badValue].sort());
    expect(rejections.get(deleted)).toMatchObject({ code: 'OBJECT_NOT_FOUND', transient: false });
    expect(rejections.get(ruled)).toMatchObject({
      code: 'VALIDATION_ERROR',
      message: 'City must be set for EU accounts',
      transient: false,
    });
    expect(rejections.get(badValue)).toMatchObject({ code: 'VALIDATION_ERROR', transient: false });
    const written = ids.filter((id) => !rejections.has(id));
    expect(byOutcome(outcomes, 'written').sort()).toEqual(written.sort());
    const back = await readBack(hubspot, ids, ['numberofemployees']);
    for (const id of written) expect(back.get(id)?.['numberofemployees']).toBe('42');
    expect(back.get(ruled)?.['numberofemployees']).toBeNull();
    expect(updateCalls(hubspot)).toHaveLength(2);
  });

  it('isolates a value HubSpot refuses for the whole batch (400) to its one record, the others written', async () => {
    const hubspot = await standIn({ batchValidation: 'whole-batch' });
    const ids = companies(hubspot, 100);
    const bad = ids[37] as string;
    const updates = ids.map((id) => ({ id, values: { annualrevenue: id === bad ? 'n/a' : 1000 } }));
    const outcomes = await writerOf(hubspot).write({ object: 'companies', updates });
    expect(outcomes.filter((o) => o.outcome === 'rejected')).toEqual([
      expect.objectContaining({ id: bad, code: 'VALIDATION_ERROR', transient: false }),
    ]);
    expect(byOutcome(outcomes, 'written')).toHaveLength(99);
    const back = await readBack(hubspot, ids, ['annualrevenue']);
    expect(ids.filter((id) => back.get(id)?.['annualrevenue'] === '1000')).toHaveLength(99);
  });

  it('slows down through a 429 burst and the ten-second window, and completes: every record written, pauses reported', async () => {
    const hubspot = await standIn({ rateLimit: { perInterval: 4, intervalMs: 200, daily: 100_000 } });
    const ids = companies(hubspot, 1000);
    hubspot.fault({ status: 429, times: 3, path: '/batch/update' });
    const pauses: { ms: number; reason: string }[] = [];
    const writer = writerOf(hubspot);
    const outcomes = await writer.write({
      object: 'companies',
      updates: ids.map((id) => ({ id, values: { city: 'Nantes' } })),
      onPause: (pause) => pauses.push(pause),
    });
    expect(byOutcome(outcomes, 'written')).toHaveLength(1000);
    expect(pauses.filter((p) => p.reason.includes('429'))).toHaveLength(3);
    expect(pauses.every((p) => p.ms === 200)).toBe(true);
    const refused = updateCalls(hubspot).filter((c) => c.status === 429);
    expect(refused).toHaveLength(3);
    expect(updateCalls(hubspot).filter((c) => c.status === 200)).toHaveLength(10);
    // The portal's own records (the official client would be paced by the same spent window).
    expect(ids.filter((id) => hubspot.record('companies', id)?.properties['city'] === 'Nantes')).toHaveLength(1000);
  });

  it('leaves what the daily limit does not allow not attempted, for the next night, without failing', async () => {
    const hubspot = await standIn({ rateLimit: { perInterval: 0, daily: 2 } });
    const ids = companies(hubspot, 350);
    const outcomes = await writerOf(hubspot).write({
      object: 'companies',
      updates: ids.map((id) => ({ id, values: { city: 'Lille' } })),
    });
    expect(byOutcome(outcomes, 'written')).toEqual(ids.slice(0, 200));
    expect(byOutcome(outcomes, 'not_attempted')).toEqual(ids.slice(200));
    const reasons = outcomes.flatMap((o) => (o.outcome === 'not_attempted' ? [o.reason] : []));
    expect(new Set(reasons)).toEqual(new Set([expect.stringMatching(/^DAILY: .*daily API limit/)]));
  });

  it('rides out a short outage (503) and leaves the rest not attempted when HubSpot stays down', async () => {
    const hubspot = await standIn();
    const ids = companies(hubspot, 300);
    hubspot.fault({ status: 503, times: 2 });
    const writer = writerOf(hubspot);
    const first = await writer.write({
      object: 'companies',
      updates: ids.map((id) => ({ id, values: { city: 'Metz' } })),
    });
    expect(byOutcome(first, 'written')).toHaveLength(300);
    hubspot.fault({ status: 502, times: 50, path: '/batch/update' });
    const second = await writer.write({
      object: 'companies',
      updates: ids.map((id) => ({ id, values: { city: 'Nice' } })),
    });
    expect(byOutcome(second, 'not_attempted')).toHaveLength(300);
  });

  it('answers an expired token with a typed error that names no token', async () => {
    const hubspot = await standIn();
    const ids = companies(hubspot, 5);
    const token = hubspot.addToken(['crm.objects.companies.write', 'crm.objects.companies.read']);
    hubspot.expireToken(token);
    const error = await writerOf(hubspot, token)
      .write({ object: 'companies', updates: ids.map((id) => ({ id, values: { city: 'x' } })) })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(CrmAuthError);
    expect((error as CrmAuthError).code).toBe('EXPIRED_AUTHENTICATION');
    expect((error as Error).message).toContain('HUBSPOT_ACCESS_TOKEN');
    const text = `${(error as Error).message}\n${(error as Error).stack}\n${JSON.stringify(error)}\n${String((error as Error).cause)}`;
    expect(text).not.toContain(token);
    expect(text).not.toContain(token.slice(8));
  });

  it('describes the properties with their types and whether the kit may write them', async () => {
    const hubspot = await standIn();
    const fields = new Map((await writerOf(hubspot).describe('companies')).map((f) => [f.name, f]));
    expect(fields.get('numberofemployees')).toMatchObject({ type: 'number', crmType: 'number', updateable: true });
    expect(fields.get('description')).toMatchObject({ type: 'string', length: 65_536, updateable: true });
    expect(fields.get('is_public')).toMatchObject({ type: 'boolean', updateable: true });
    expect(fields.get('industry')).toMatchObject({ type: 'other', crmType: 'enumeration' });
    expect(fields.get('hs_object_id')).toMatchObject({ updateable: false });
    expect(fields.get('createdate')).toMatchObject({ type: 'datetime', updateable: false });
    expect(fields.get('num_associated_contacts')).toMatchObject({ updateable: false });
  });

  it("creates the kit's properties in its own property group, once", async () => {
    const hubspot = await standIn();
    const writer = writerOf(hubspot);
    const kit = [
      { name: 'signal_count', label: 'Signal Count', type: 'number' as const },
      { name: 'signal_last_seen', label: 'Signal Last Seen', type: 'date' as const },
      { name: 'signal_summary', label: 'Signal Summary', type: 'string' as const },
    ];
    expect(await writer.createProperties('companies', kit)).toEqual(
      kit.map((p) => ({ name: p.name, outcome: 'created' })),
    );
    expect(await writer.createProperties('companies', kit)).toEqual(
      kit.map((p) => ({ name: p.name, outcome: 'exists' })),
    );
    const official = new Client({ accessToken: hubspot.token, basePath: hubspot.url }).crm.properties;
    expect(await official.coreApi.getByName('companies', 'signal_last_seen')).toMatchObject({
      type: 'date',
      groupName: 'signal_kit',
    });
    expect((await official.groupsApi.getByName('companies', 'signal_kit')).label).toBe('Signal Kit');
    const mistyped = await writer.createProperties('companies', [{ name: 'signal_count', label: 'x', type: 'string' }]);
    expect(mistyped).toEqual([{ name: 'signal_count', outcome: 'mistyped', crmType: 'number' }]);
  });

  it('checks the token: its portal, its scopes and each scope missing with its fix', async () => {
    const hubspot = await standIn();
    const full = await writerOf(hubspot).check('contacts');
    expect(full).toMatchObject({ crm: 'hubspot', identity: `HubSpot portal ${hubspot.portalId}`, missing: [] });
    const token = hubspot.addToken(['crm.objects.companies.read', 'crm.schemas.companies.read']);
    const partial = await writerOf(hubspot, token).check('companies');
    expect(partial.missing.map((m) => m.what)).toEqual(['crm.objects.companies.write']);
    expect(partial.missing[0]?.fix).toContain('Private Apps');
    const wrong = await writerOf(hubspot, 'pat-na1-not-a-token')
      .check('companies')
      .catch((e: unknown) => e);
    expect(wrong).toBeInstanceOf(CrmAuthError);
  });

  it('reads current values for fill-empty: null when empty, unknown and deleted ids absent', async () => {
    const hubspot = await standIn();
    const [a, b, gone] = hubspot.plant('contacts', [
      { email: 'a@x.io', jobtitle: 'CTO' },
      { email: 'b@x.io' },
      { email: 'c@x.io' },
    ]) as [string, string, string];
    hubspot.archive('contacts', gone);
    const read = await writerOf(hubspot).read('contacts', [a, b, gone, '424242'], ['jobtitle', 'company']);
    expect(Object.fromEntries(read)).toEqual({
      [a]: { jobtitle: 'CTO', company: null },
      [b]: { jobtitle: null, company: null },
    });
  });
});
