/**
 * The HubSpot stand-in (crm-sandbox/hubspot/) driven only through HubSpot's official client, unchanged
 * (`new Client({ accessToken, basePath })`): status codes and bodies as HubSpot's CRM API v3 reference gives them.
 */
import { Client } from '@hubspot/api-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type HubspotStandIn, startHubspotStandIn } from '../../crm-sandbox/hubspot/index.ts';

interface ClientFailure {
  code: number;
  body: { status: string; message: string; correlationId: string; category: string; [k: string]: unknown };
  headers: Record<string, string>;
}

async function failure(call: Promise<unknown>): Promise<ClientFailure> {
  try {
    await call;
  } catch (error) {
    return error as ClientFailure;
  }
  throw new Error('the call succeeded');
}

function client(standIn: HubspotStandIn, accessToken = standIn.token): Client {
  return new Client({ accessToken, basePath: standIn.url });
}

describe('the HubSpot stand-in, through @hubspot/api-client', () => {
  let hubspot: HubspotStandIn;
  beforeAll(async () => {
    hubspot = await startHubspotStandIn({ rateLimit: { perInterval: 0 } });
  });
  afterAll(() => hubspot.close());

  it('creates companies in a batch (201), reads them back (200) and updates them (200)', async () => {
    const api = client(hubspot).crm.companies.batchApi;
    const created = await api.create({
      inputs: [
        { properties: { name: 'Acme', domain: 'acme.com' }, associations: [] },
        { properties: { name: 'Globex', domain: 'globex.com', numberofemployees: '120' }, associations: [] },
      ],
    });
    expect(created.status).toBe('COMPLETE');
    const ids = created.results.map((r) => r.id);
    expect(ids).toHaveLength(2);
    const updated = await api.updateWithHttpInfo({
      inputs: [
        { id: ids[0] as string, properties: { numberofemployees: '55', founded_year: '1999' } },
        { id: ids[1] as string, properties: { numberofemployees: '' } },
      ],
    });
    expect(updated.httpStatusCode).toBe(200);
    const read = await api.read({
      inputs: ids.map((id) => ({ id })),
      properties: ['name', 'numberofemployees', 'founded_year'],
      propertiesWithHistory: [],
    });
    const byId = new Map(read.results.map((r) => [r.id, r.properties]));
    expect(byId.get(ids[0] as string)).toMatchObject({ name: 'Acme', numberofemployees: '55', founded_year: '1999' });
    expect(byId.get(ids[1] as string)).toMatchObject({ name: 'Globex', numberofemployees: null });
    expect(read.results[0]?.createdAt).toBeInstanceOf(Date);
    expect(hubspot.record('companies', ids[0] as string)?.properties['numberofemployees']).toBe('55');
  });

  it('answers a batch update with a deleted record and a refused one 207, one error each, and writes the rest', async () => {
    const [kept, gone, refused, badValue] = hubspot.plant('companies', [
      { name: 'A' },
      { name: 'B' },
      { name: 'C' },
      { name: 'D' },
    ]) as [string, string, string, string];
    hubspot.archive('companies', gone);
    hubspot.refuse('companies', refused, { category: 'VALIDATION_ERROR', message: 'A validation rule refused it' });
    const answer = await client(hubspot).crm.companies.batchApi.updateWithHttpInfo({
      inputs: [
        { id: kept, properties: { city: 'Lyon' } },
        { id: gone, properties: { city: 'Lyon' } },
        { id: refused, properties: { city: 'Lyon' } },
        { id: badValue, properties: { numberofemployees: 'many' } },
      ],
    });
    expect(answer.httpStatusCode).toBe(207);
    const body = answer.data as {
      results: { id: string }[];
      numErrors?: number;
      errors?: { category: string; context: { ids: string[] }; message: string }[];
    };
    expect(body.results.map((r) => r.id)).toEqual([kept]);
    expect(body.numErrors).toBe(3);
    const errors = new Map(body.errors?.map((e) => [e.context.ids[0], e]));
    expect(errors.get(gone)?.category).toBe('OBJECT_NOT_FOUND');
    expect(errors.get(refused)).toMatchObject({
      category: 'VALIDATION_ERROR',
      message: 'A validation rule refused it',
    });
    expect(errors.get(badValue)?.category).toBe('VALIDATION_ERROR');
    expect(errors.get(badValue)?.message).toContain('INVALID_INTEGER');
    expect(hubspot.record('companies', kept)?.properties['city']).toBe('Lyon');
    expect(hubspot.record('companies', refused)?.properties['city']).toBeUndefined();
  });

  it('answers a batch read naming unknown ids 207 OBJECT_NOT_FOUND with the found ones', async () => {
    const [id] = hubspot.plant('contacts', [{ email: 'a@acme.com', firstname: 'Ann' }]) as [string];
    const answer = await client(hubspot).crm.contacts.batchApi.readWithHttpInfo({
      inputs: [{ id }, { id: '999' }],
      properties: ['email', 'firstname'],
      propertiesWithHistory: [],
    });
    expect(answer.httpStatusCode).toBe(207);
    const body = answer.data as { results: { properties: object }[]; errors?: { category: string; context: object }[] };
    expect(body.results.map((r) => r.properties)).toEqual([
      expect.objectContaining({ email: 'a@acme.com', firstname: 'Ann' }),
    ]);
    expect(body.errors?.[0]).toMatchObject({ category: 'OBJECT_NOT_FOUND', context: { ids: ['999'] } });
  });

  it('refuses more than 100 inputs in one call with 400 VALIDATION_ERROR', async () => {
    const inputs = Array.from({ length: 101 }, (_, i) => ({ id: String(i + 1), properties: { city: 'x' } }));
    const error = await failure(client(hubspot).crm.companies.batchApi.update({ inputs }));
    expect(error.code).toBe(400);
    expect(error.body).toMatchObject({ status: 'error', category: 'VALIDATION_ERROR' });
    expect(error.body.correlationId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('answers a wrong token 401 INVALID_AUTHENTICATION, an expired one 401 EXPIRED_AUTHENTICATION', async () => {
    const wrong = await failure(
      client(hubspot, 'pat-na1-wrong').crm.companies.batchApi.read({
        inputs: [],
        properties: [],
        propertiesWithHistory: [],
      }),
    );
    expect(wrong.code).toBe(401);
    expect(wrong.body).toMatchObject({ status: 'error', category: 'INVALID_AUTHENTICATION' });
    const token = hubspot.addToken(['crm.objects.companies.read']);
    hubspot.expireToken(token);
    const expired = await failure(
      client(hubspot, token).crm.companies.batchApi.read({ inputs: [], properties: [], propertiesWithHistory: [] }),
    );
    expect(expired.code).toBe(401);
    expect(expired.body.category).toBe('EXPIRED_AUTHENTICATION');
  });

  it('answers a token without the scope 403 MISSING_SCOPES naming the scopes required', async () => {
    const token = hubspot.addToken(['crm.objects.companies.read']);
    const error = await failure(client(hubspot, token).crm.companies.batchApi.update({ inputs: [] }));
    expect(error.code).toBe(403);
    expect(error.body).toMatchObject({
      category: 'MISSING_SCOPES',
      errors: [{ context: { requiredGranularScopes: ['crm.objects.companies.write'] } }],
    });
    const info = (await (
      await client(hubspot).apiRequest({
        method: 'POST',
        path: '/oauth/v2/private-apps/get/access-token-info',
        body: { tokenKey: token },
      })
    ).json()) as { hubId: number; scopes: string[] };
    expect(info).toMatchObject({ hubId: hubspot.portalId, scopes: ['crm.objects.companies.read'] });
  });

  it('lists, reads and creates properties and property groups (201, then 409 for a name taken)', async () => {
    const properties = client(hubspot).crm.properties;
    const all = await properties.coreApi.getAll('companies');
    const objectId = all.results.find((p) => p.name === 'hs_object_id');
    expect(objectId?.modificationMetadata?.readOnlyValue).toBe(true);
    expect(all.results.find((p) => p.name === 'numberofemployees')).toMatchObject({ type: 'number' });
    const group = await properties.groupsApi.create('companies', { name: 'signal_kit', label: 'Signal Kit' });
    expect(group).toMatchObject({ name: 'signal_kit', label: 'Signal Kit', archived: false });
    const created = await properties.coreApi.create('companies', {
      name: 'signal_count',
      label: 'Signal count',
      type: 'number' as never,
      fieldType: 'number' as never,
      groupName: 'signal_kit',
    });
    expect(created).toMatchObject({ name: 'signal_count', type: 'number', groupName: 'signal_kit' });
    expect(created.createdAt).toBeInstanceOf(Date);
    expect(await properties.coreApi.getByName('companies', 'signal_count')).toMatchObject({ name: 'signal_count' });
    expect((await properties.groupsApi.getAll('companies')).results.map((g) => g.name)).toContain('signal_kit');
    const again = await failure(
      properties.coreApi.create('companies', {
        name: 'signal_count',
        label: 'x',
        type: 'number' as never,
        fieldType: 'number' as never,
        groupName: 'signal_kit',
      }),
    );
    expect(again.code).toBe(409);
    expect(again.body.category).toBe('OBJECT_ALREADY_EXISTS');
    const missing = await failure(properties.coreApi.getByName('companies', 'no_such_property'));
    expect(missing.code).toBe(404);
  });

  it("updates and reads one record as a person's edit would (basicApi.update, getById; 404 for a deleted one)", async () => {
    const [id, gone] = hubspot.plant('contacts', [{ email: 'p@x.io' }, { email: 'q@x.io' }]) as [string, string];
    const basic = client(hubspot).crm.contacts.basicApi;
    const updated = await basic.update(id, { properties: { jobtitle: 'Head of Sales' } });
    expect(updated.properties['jobtitle']).toBe('Head of Sales');
    const read = await basic.getById(id, ['jobtitle', 'email']);
    expect(read.properties).toMatchObject({ jobtitle: 'Head of Sales', email: 'p@x.io' });
    hubspot.archive('contacts', gone);
    expect((await failure(basic.getById(gone))).code).toBe(404);
    expect((await failure(basic.update(gone, { properties: { jobtitle: 'x' } }))).code).toBe(404);
  });

  it('takes faults over HTTP from another process (POST /__admin/faults) and refuses a malformed one', async () => {
    const post = (body: unknown) =>
      fetch(`${hubspot.url}/__admin/faults`, { method: 'POST', body: JSON.stringify(body) });
    expect((await post({ status: 418 })).status).toBe(400);
    expect((await post({ status: 429, path: '/batch/read' })).status).toBe(204);
    const error = await failure(
      client(hubspot).crm.companies.batchApi.read({ inputs: [], properties: [], propertiesWithHistory: [] }),
    );
    expect(error.code).toBe(429);
    expect(error.body.policyName).toBe('TEN_SECONDLY_ROLLING');
  });

  it('answers an injected 503 once, then serves again', async () => {
    hubspot.fault({ status: 503, path: '/batch/read' });
    const api = client(hubspot).crm.companies.batchApi;
    const error = await failure(api.read({ inputs: [], properties: [], propertiesWithHistory: [] }));
    expect(error.code).toBe(503);
    expect(error.body.status).toBe('error');
    await expect(api.read({ inputs: [], properties: [], propertiesWithHistory: [] })).resolves.toMatchObject({
      results: [],
    });
  });
});

describe("the stand-in's limits, through @hubspot/api-client", () => {
  it('reports the ten-second window on every answer and answers past it 429 TEN_SECONDLY_ROLLING', async () => {
    const hubspot = await startHubspotStandIn({ rateLimit: { perInterval: 3, intervalMs: 60_000, daily: 1000 } });
    try {
      const api = client(hubspot).crm.companies.batchApi;
      const read = () => api.readWithHttpInfo({ inputs: [], properties: [], propertiesWithHistory: [] });
      const first = await read();
      expect(first.headers).toMatchObject({
        'x-hubspot-ratelimit-max': '3',
        'x-hubspot-ratelimit-remaining': '2',
        'x-hubspot-ratelimit-interval-milliseconds': '60000',
        'x-hubspot-ratelimit-daily': '1000',
        'x-hubspot-ratelimit-daily-remaining': '999',
      });
      await read();
      await read();
      const error = await failure(read());
      expect(error.code).toBe(429);
      expect(error.body).toMatchObject({
        status: 'error',
        errorType: 'RATE_LIMIT',
        policyName: 'TEN_SECONDLY_ROLLING',
      });
      expect(error.headers['x-hubspot-ratelimit-remaining']).toBe('0');
    } finally {
      await hubspot.close();
    }
  });

  it('answers past the daily limit 429 DAILY', async () => {
    const hubspot = await startHubspotStandIn({ rateLimit: { perInterval: 0, daily: 1 } });
    try {
      const api = client(hubspot).crm.companies.batchApi;
      await api.read({ inputs: [], properties: [], propertiesWithHistory: [] });
      const error = await failure(api.read({ inputs: [], properties: [], propertiesWithHistory: [] }));
      expect(error.code).toBe(429);
      expect(error.body.policyName).toBe('DAILY');
      expect(error.headers['x-hubspot-ratelimit-daily-remaining']).toBe('0');
    } finally {
      await hubspot.close();
    }
  });
});
