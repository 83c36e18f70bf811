/**
 * The Salesforce stand-in, driven only through the official client (`jsforce`) as it ships: sObject Collections,
 * describe, retrieve, Bulk API 2.0 ingest jobs and their result files, the OAuth 2.0 JWT bearer flow and a session
 * refreshed after it expired, `Sforce-Limit-Info`, per-record errors and faults on demand.
 */
import { createSign, generateKeyPairSync } from 'node:crypto';
import jsforce from 'jsforce';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  JWT_BEARER_GRANT,
  type SalesforceStandIn,
  startSalesforceStandIn,
} from '../../crm-sandbox/salesforce/index.ts';

const { Connection } = jsforce;
type Conn = InstanceType<typeof Connection>;

function assertion(org: SalesforceStandIn, key = org.privateKeyPem as string, claims: object = {}): string {
  const part = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const exp = Math.floor(Date.now() / 1000) + 180;
  const body = `${part({ alg: 'RS256' })}.${part({ iss: org.clientId, sub: org.username, aud: org.loginUrl, exp, ...claims })}`;
  return `${body}.${createSign('RSA-SHA256').update(body).sign(key, 'base64url')}`;
}

let org: SalesforceStandIn;
let conn: Conn;

beforeAll(async () => {
  org = await startSalesforceStandIn();
  conn = new Connection({ instanceUrl: org.url, accessToken: org.accessToken, version: org.version });
});
afterAll(() => org.close());

describe('sObject Collections and describe through jsforce', () => {
  it('updates records by id and reads them back with retrieve, typed as the fields are', async () => {
    const ids = org.records.seed('Account', [{ Name: 'Acme' }, { Name: 'Globex' }]);
    const results = await conn.sobject('Account').update([
      {
        Id: ids[0] as string,
        Signal_Count__c: 3,
        Signal_Last_Seen__c: '2026-11-30',
        Signal_Company_Name__c: 'Acme Inc',
      },
      { Id: ids[1] as string, Signal_Detected_At__c: '2026-12-01T10:00:00Z', Signal_Score__c: 42.5 },
    ]);
    expect(results).toEqual(ids.map((id) => ({ id, success: true, errors: [] })));
    const back = await conn.sobject('Account').retrieve(ids, {
      fields: ['Name', 'Signal_Count__c', 'Signal_Last_Seen__c', 'Signal_Detected_At__c', 'Signal_Score__c'],
    });
    expect(back[0]).toMatchObject({ Id: ids[0], Name: 'Acme', Signal_Count__c: 3, Signal_Last_Seen__c: '2026-11-30' });
    expect(back[1]).toMatchObject({ Signal_Detected_At__c: '2026-12-01T10:00:00.000+0000', Signal_Score__c: 42.5 });
  });

  it('answers each record with its own error and writes the rest (allOrNone false)', async () => {
    const ids = org.records.seed('Account', [{}, {}, {}, {}, {}, {}]) as [
      string,
      string,
      string,
      string,
      string,
      string,
    ];
    org.records.markDeleted(ids[0]);
    org.records.lock(ids[1], 1);
    org.records.addValidationRule({
      object: 'Account',
      message: 'Signal count cannot be negative',
      field: 'Signal_Count__c',
      rejects: (r) => typeof r['Signal_Count__c'] === 'number' && r['Signal_Count__c'] < 0,
    });
    const results = await conn.sobject('Account').update([
      { Id: ids[0], Signal_Count__c: 1 },
      { Id: ids[1], Signal_Count__c: 1 },
      { Id: ids[2], Signal_Count__c: -1 },
      { Id: ids[3], Signal_Formula__c: 1 },
      { Id: ids[4], Signal_Company_Name__c: 'x'.repeat(256) },
      { Id: ids[5], Signal_Count__c: 7 },
    ]);
    // Salesforce names a record's error `statusCode` (jsforce's types say `errorCode`).
    const codes = results.map((r) =>
      r.success ? 'ok' : (r.errors[0] as unknown as { statusCode: string }).statusCode,
    );
    expect(codes).toEqual([
      'ENTITY_IS_DELETED',
      'UNABLE_TO_LOCK_ROW',
      'FIELD_CUSTOM_VALIDATION_EXCEPTION',
      'INVALID_FIELD_FOR_INSERT_UPDATE',
      'STRING_TOO_LONG',
      'ok',
    ]);
    expect(results[2]).toMatchObject({
      errors: [{ message: 'Signal count cannot be negative', fields: ['Signal_Count__c'] }],
    });
    expect(org.records.get(ids[5])?.['Signal_Count__c']).toBe(7);
    expect(org.records.get(ids[2])?.['Signal_Count__c']).toBeUndefined();
    // The lock was for one attempt: the next one goes through.
    expect(await conn.sobject('Account').update({ Id: ids[1], Signal_Count__c: 2 })).toMatchObject({ success: true });
  });

  it('refuses an unknown id of the object and a collection over 200 records', async () => {
    const [unknown] = await conn.sobject('Account').update([{ Id: '001Dn0000009999', Signal_Count__c: 1 }]);
    expect(unknown).toMatchObject({ success: false, errors: [{ statusCode: 'INVALID_CROSS_REFERENCE_KEY' }] });
    const many = org.records.seed(
      'Account',
      Array.from({ length: 201 }, () => ({})),
    );
    await expect(conn.sobject('Account').update(many.map((Id) => ({ Id, Signal_Count__c: 1 })))).rejects.toMatchObject({
      errorCode: 'EXCEEDED_ID_LIMIT',
    });
    const split = await conn.sobject('Account').update(
      many.map((Id) => ({ Id, Signal_Count__c: 1 })),
      { allowRecursive: true },
    );
    expect(split.filter((r) => r.success)).toHaveLength(201);
  });

  it('describes the object: types, lengths, updateable', async () => {
    const d = await conn.describe('Account');
    const byName = new Map(d.fields.map((f) => [f.name, f]));
    expect(byName.get('Signal_Count__c')).toMatchObject({ type: 'double', updateable: true, custom: true });
    expect(byName.get('Signal_Company_Name__c')).toMatchObject({ type: 'string', length: 255 });
    expect(byName.get('Signal_Formula__c')).toMatchObject({ updateable: false, calculated: true });
    await expect(conn.describe('Opportunity')).rejects.toMatchObject({ errorCode: 'NOT_FOUND' });
  });

  it('reports the daily API usage in Sforce-Limit-Info and refuses calls past the limit', async () => {
    await conn.describe('Contact');
    expect(conn.limitInfo.apiUsage).toEqual({ used: org.usage.used, limit: org.usage.max });
    const saved = org.usage.used;
    org.usage.used = org.usage.max;
    await expect(conn.describe('Contact')).rejects.toMatchObject({ errorCode: 'REQUEST_LIMIT_EXCEEDED' });
    org.usage.used = saved;
  });
});

describe('Bulk API 2.0 ingest jobs through jsforce', () => {
  it('runs an update job: successful and failed results, one job created', async () => {
    const ids = org.records.seed('Contact', [{ LastName: 'A' }, { LastName: 'B' }, { LastName: 'C' }]);
    org.records.markDeleted(ids[1] as string);
    const before = org.ingestJobsCreated;
    const results = await conn.bulk2.loadAndWaitForResults({
      object: 'Contact',
      operation: 'update',
      input: ids.map((Id, i) => ({ Id, Signal_Company_Name__c: `Co, "${i}"`, Signal_Count__c: i })),
      pollInterval: 20,
    });
    expect(org.ingestJobsCreated - before).toBe(1);
    expect(results.successfulResults.map((r) => r['sf__Id'])).toEqual([ids[0], ids[2]]);
    expect(results.failedResults).toEqual([
      expect.objectContaining({ sf__Id: ids[1], sf__Error: 'ENTITY_IS_DELETED:entity is deleted:--' }),
    ]);
    const [back] = await conn
      .sobject('Contact')
      .retrieve([ids[2] as string], { fields: ['Signal_Company_Name__c', 'Signal_Count__c'] });
    expect(back).toMatchObject({ Signal_Company_Name__c: 'Co, "2"', Signal_Count__c: 2 });
  });

  it('takes one upload per job, and fails a job whose CSV names a field the object lacks', async () => {
    const [id] = org.records.seed('Lead', [{ LastName: 'L', Company: 'C' }]) as [string];
    const job = conn.bulk2.createJob({ object: 'Lead', operation: 'update' });
    await job.open();
    await job.uploadData(`Id,Signal_Count__c\n${id},5\n`);
    const again = conn.bulk2.job('ingest', { id: job.id as string });
    await again.check();
    await expect(again.uploadData(`Id,Signal_Count__c\n${id},6\n`)).rejects.toMatchObject({
      errorCode: 'BULK_API_ERROR',
    });
    await job.close();
    await job.poll(20, 10_000);
    expect(org.records.get(id)?.['Signal_Count__c']).toBe(5);
    const bad = conn.bulk2.createJob({ object: 'Lead', operation: 'update' });
    await bad.open();
    await bad.uploadData(`Id,No_Such__c\n${id},1\n`);
    await bad.close();
    await expect(bad.poll(20, 10_000)).rejects.toThrow(/Field name not found : No_Such__c/);
    expect(await bad.getUnprocessedRecords()).toHaveLength(1);
  });
});

describe('OAuth 2.0 JWT bearer flow', () => {
  it('grants a session for an assertion signed with the connected app key, and refuses others', async () => {
    const c = new Connection({ loginUrl: org.loginUrl, version: org.version });
    const user = await c.authorize({ grant_type: JWT_BEARER_GRANT, assertion: assertion(org) });
    expect(user.organizationId).toMatch(/^00D/);
    expect(await c.describe('Lead')).toMatchObject({ name: 'Lead' });
    const other = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({
      type: 'pkcs8',
      format: 'pem',
    });
    await expect(
      c.authorize({ grant_type: JWT_BEARER_GRANT, assertion: assertion(org, other.toString()) }),
    ).rejects.toMatchObject({ name: 'invalid_grant' });
    await expect(
      c.authorize({
        grant_type: JWT_BEARER_GRANT,
        assertion: assertion(org, undefined, { aud: 'https://login.salesforce.com' }),
      }),
    ).rejects.toMatchObject({ name: 'invalid_grant' });
    await expect(
      c.authorize({ grant_type: JWT_BEARER_GRANT, assertion: assertion(org, undefined, { iss: 'someone' }) }),
    ).rejects.toMatchObject({ name: 'invalid_client_id' });
  });

  it('answers 401 INVALID_SESSION_ID on an expired session; a refresh function signing a new assertion carries on', async () => {
    let refreshed = 0;
    const c = new Connection({
      loginUrl: org.loginUrl,
      version: org.version,
      refreshFn: (cn, callback) => {
        refreshed++;
        cn.authorize({ grant_type: JWT_BEARER_GRANT, assertion: assertion(org) })
          .then(() => callback(null, cn.accessToken as string))
          .catch((e: Error) => callback(e));
      },
    });
    await c.authorize({ grant_type: JWT_BEARER_GRANT, assertion: assertion(org) });
    org.expireSessions();
    const plain = new Connection({ instanceUrl: org.url, accessToken: org.accessToken, version: org.version });
    await expect(plain.describe('Account')).rejects.toMatchObject({ errorCode: 'INVALID_SESSION_ID' });
    expect(await c.describe('Account')).toMatchObject({ name: 'Account' });
    expect(refreshed).toBe(1);
    conn = new Connection({ instanceUrl: org.url, accessToken: org.issueToken(), version: org.version });
  });
});

describe('faults on demand', () => {
  it('answers an outage with 503 SERVER_UNAVAILABLE for the calls it was armed for, then recovers', async () => {
    org.fail({ path: '/composite/sobjects', status: 503, times: 1 });
    const [id] = org.records.seed('Account', [{}]) as [string];
    await expect(conn.sobject('Account').update([{ Id: id, Signal_Count__c: 1 }])).rejects.toMatchObject({
      errorCode: 'SERVER_UNAVAILABLE',
    });
    expect(await conn.sobject('Account').update([{ Id: id, Signal_Count__c: 1 }])).toMatchObject([{ success: true }]);
  });
});
