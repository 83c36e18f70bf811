/**
 * The kit's Salesforce writer against the Salesforce stand-in, its results read back through the official client
 * (jsforce): a large night in one ingest job, a small one through sObject Collections, per-record rejections with
 * the rest written, a cut write resumed without a second job, an expired session refreshed through the JWT bearer
 * flow, outages and the daily limit slowing the write-back without failing it.
 */
import { generateKeyPairSync } from 'node:crypto';
import jsforce from 'jsforce';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SalesforceAuth } from '../../connectors/crm/salesforce/auth.ts';
import { SalesforceWriter, type SalesforceWriterOptions } from '../../connectors/crm/salesforce/writer.ts';
import type { CrmRecordUpdate, CrmWriteCheckpoint, CrmWriteOutcome } from '../../connectors/crm/writer.ts';
import { CrmAuthError, CrmUnavailableError } from '../../connectors/errors.ts';
import { type SalesforceStandIn, startSalesforceStandIn } from '../../crm-sandbox/salesforce/index.ts';

const { Connection } = jsforce;

const FAST: SalesforceWriterOptions = {
  pacing: { firstPauseMs: 5, maxPauseMs: 20, nearLimitPauseMs: 5 },
  ingest: { pollIntervalMs: 10 },
};

let org: SalesforceStandIn;
let jwt: SalesforceAuth;

beforeAll(async () => {
  org = await startSalesforceStandIn();
  jwt = {
    kind: 'jwt',
    loginUrl: org.loginUrl,
    clientId: org.clientId,
    username: org.username,
    privateKeyPem: org.privateKeyPem as string,
  };
});
afterAll(() => org.close());

/** What each update sets, computed from its position alone: the truth the CRM must hold afterwards. */
function truth(i: number): Record<string, string | number> {
  return {
    Signal_Count__c: i % 97,
    Signal_Company_Name__c: `Company ${i}, "quoted"`,
    Signal_Last_Seen__c: `2026-${String((i % 12) + 1).padStart(2, '0')}-15`,
    Signal_Detected_At__c: `2026-11-${String((i % 28) + 1).padStart(2, '0')}T08:30:00.000+0000`,
  };
}

const FIELDS = Object.keys(truth(0));

function seedAccounts(n: number): { ids: string[]; updates: CrmRecordUpdate[] } {
  const ids = org.records.seed(
    'Account',
    Array.from({ length: n }, (_, i) => ({ Name: `Account ${i}` })),
  );
  return { ids, updates: ids.map((id, i) => ({ id, values: truth(i) })) };
}

/** The records as jsforce reads them back (retrieve, 2,000 ids a call). */
async function readBack(ids: string[]): Promise<Map<string, Record<string, unknown>>> {
  const conn = new Connection({ instanceUrl: org.url, accessToken: org.issueToken(), version: org.version });
  const found = new Map<string, Record<string, unknown>>();
  for (let start = 0; start < ids.length; start += 2000) {
    const chunk = ids.slice(start, start + 2000);
    const records = await conn.sobject('Account').retrieve(chunk, { fields: FIELDS });
    chunk.forEach((id, i) => {
      found.set(id, records[i] as unknown as Record<string, unknown>);
    });
  }
  return found;
}

const outcomeOf = (outcomes: CrmWriteOutcome[]) => new Map(outcomes.map((o) => [o.id, o]));

describe('SalesforceWriter', () => {
  it('writes 10,000 updates through one ingest job, and jsforce reads every value back as written', async () => {
    const { ids, updates } = seedAccounts(10_000);
    const jobsBefore = org.ingestJobsCreated;
    const writer = new SalesforceWriter(jwt, FAST);
    const outcomes = await writer.write({ object: 'Account', updates });
    expect(org.ingestJobsCreated - jobsBefore).toBe(1);
    expect(outcomes.filter((o) => o.outcome === 'written')).toHaveLength(10_000);
    const back = await readBack(ids);
    const wrong = ids.filter((id, i) => FIELDS.some((f) => back.get(id)?.[f] !== truth(i)[f]));
    expect(wrong).toEqual([]);
  });

  it('writes a night of 450 records through sObject Collections: 3 calls, no ingest job', async () => {
    const { ids, updates } = seedAccounts(450);
    const jobsBefore = org.ingestJobsCreated;
    const writer = new SalesforceWriter(jwt, FAST);
    const outcomes = await writer.write({ object: 'Account', updates });
    expect(writer.calls).toBe(3);
    expect(org.ingestJobsCreated).toBe(jobsBefore);
    expect(outcomes.every((o) => o.outcome === 'written')).toBe(true);
    const back = await readBack(ids);
    expect(ids.filter((id, i) => back.get(id)?.['Signal_Count__c'] !== truth(i)['Signal_Count__c'])).toEqual([]);
  });

  for (const path of ['sObject Collections', 'an ingest job'] as const) {
    it(`reports a deleted record, a validation rule and a locked row per record through ${path}, and writes the rest`, async () => {
      const { ids, updates } = seedAccounts(40);
      const [deleted, invalid, locked] = ids as [string, string, string];
      org.records.markDeleted(deleted);
      org.records.lock(locked);
      org.records.addValidationRule({
        object: 'Account',
        message: 'Company name may not say Forbidden',
        field: 'Signal_Company_Name__c',
        rejects: (r) => String(r['Signal_Company_Name__c']).startsWith('Forbidden'),
      });
      (updates[1] as CrmRecordUpdate).values['Signal_Company_Name__c'] = 'Forbidden Inc';
      const writer = new SalesforceWriter(jwt, { ...FAST, bulkThreshold: path === 'an ingest job' ? 10 : 2000 });
      const jobsBefore = org.ingestJobsCreated;
      const byId = outcomeOf(await writer.write({ object: 'Account', updates }));
      org.records.unlock(locked);
      expect(org.ingestJobsCreated - jobsBefore).toBe(path === 'an ingest job' ? 1 : 0);
      expect(byId.get(deleted)).toMatchObject({ outcome: 'rejected', code: 'ENTITY_IS_DELETED', transient: false });
      expect(byId.get(invalid)).toMatchObject({
        outcome: 'rejected',
        code: 'FIELD_CUSTOM_VALIDATION_EXCEPTION',
        message: 'Company name may not say Forbidden',
        transient: false,
      });
      expect(byId.get(locked)).toMatchObject({ outcome: 'rejected', code: 'UNABLE_TO_LOCK_ROW', transient: true });
      const rest = ids.slice(3);
      expect(rest.filter((id) => byId.get(id)?.outcome !== 'written')).toEqual([]);
      const back = await readBack(rest);
      expect(rest.filter((id, i) => back.get(id)?.['Signal_Count__c'] !== truth(i + 3)['Signal_Count__c'])).toEqual([]);
      expect(org.records.get(locked)?.['Signal_Count__c']).toBeUndefined();
    });
  }
});

describe('a write cut after its ingest job was created, resumed', () => {
  const cutAt = async (
    arm: () => void,
    updates: CrmRecordUpdate[],
    cutOnCheckpoint: boolean,
  ): Promise<CrmWriteCheckpoint | undefined> => {
    let saved: CrmWriteCheckpoint | undefined;
    const writer = new SalesforceWriter(jwt, {
      ...FAST,
      bulkThreshold: 10,
      pacing: { ...FAST.pacing, maxAttempts: 2 },
    });
    arm();
    await expect(
      writer.write({
        object: 'Account',
        updates,
        onCheckpoint: async (checkpoint) => {
          saved = checkpoint;
          if (cutOnCheckpoint && 'jobId' in checkpoint) throw new Error('worker killed');
        },
      }),
    ).rejects.toThrow();
    org.clearFaults();
    return saved;
  };

  const cases = [
    { name: 'before its upload', arm: () => {}, cutOnCheckpoint: true },
    {
      name: 'mid-upload (the connection cut, nothing received)',
      arm: () => org.fail({ method: 'PUT', path: '/batches', drop: true, times: Number.POSITIVE_INFINITY }),
      cutOnCheckpoint: false,
    },
    {
      name: 'after its upload, before its close',
      arm: () => org.fail({ method: 'PATCH', path: '/jobs/ingest/', drop: true, times: Number.POSITIVE_INFINITY }),
      cutOnCheckpoint: false,
    },
    {
      name: 'while it was processed', // 403 REQUEST_LIMIT_EXCEEDED (the concurrent request limit): jsforce does not retry it itself, the writer pauses.
      arm: () =>
        org.fail({
          method: 'GET',
          path: '/jobs/ingest/',
          status: 403,
          errorCode: 'REQUEST_LIMIT_EXCEEDED',
          times: Number.POSITIVE_INFINITY,
        }),
      cutOnCheckpoint: false,
    },
  ];
  for (const c of cases) {
    it(`${c.name}: the same job carried on, no second job, every record written once`, async () => {
      const { ids, updates } = seedAccounts(60);
      const jobsBefore = org.ingestJobsCreated;
      const checkpoint = await cutAt(c.arm, updates, c.cutOnCheckpoint);
      expect(checkpoint).toMatchObject({ crm: 'salesforce', jobId: expect.stringMatching(/^750/) });
      expect(org.ingestJobsCreated - jobsBefore).toBe(1);
      const writer = new SalesforceWriter(jwt, FAST);
      const outcomes = await writer.write({ object: 'Account', updates, resume: checkpoint as CrmWriteCheckpoint });
      expect(org.ingestJobsCreated - jobsBefore).toBe(1);
      expect(outcomes.filter((o) => o.outcome === 'written')).toHaveLength(60);
      const job = org.ingestJobs().find((j) => j.id === (checkpoint as { jobId: string }).jobId);
      expect(job?.successful).toHaveLength(60);
      const back = await readBack(ids);
      expect(ids.filter((id, i) => back.get(id)?.['Signal_Count__c'] !== truth(i)['Signal_Count__c'])).toEqual([]);
    });
  }
});

describe('a create-job call whose answer was lost (the job created, its id never seen)', () => {
  const lostCreate = () => org.fail({ method: 'POST', path: '/jobs/ingest', dropAnswer: true });

  it('tried again in the same write: the job the lost answer made is found among the open jobs and used, no second job', async () => {
    const { ids, updates } = seedAccounts(60);
    const jobsBefore = org.ingestJobsCreated;
    lostCreate();
    const pauses: string[] = [];
    const writer = new SalesforceWriter(jwt, { ...FAST, bulkThreshold: 10 });
    const outcomes = await writer.write({ object: 'Account', updates, onPause: (p) => pauses.push(p.reason) });
    // The stand-in's truth: it created exactly one job, and that job wrote every record.
    expect(org.ingestJobsCreated - jobsBefore).toBe(1);
    expect(org.ingestJobs().at(-1)?.successful).toHaveLength(60);
    expect(outcomes.filter((o) => o.outcome === 'written')).toHaveLength(60);
    expect(pauses).toHaveLength(1);
    const back = await readBack(ids);
    expect(ids.filter((id, i) => back.get(id)?.['Signal_Count__c'] !== truth(i)['Signal_Count__c'])).toEqual([]);
  });

  it('the worker killed with the answer lost: the next attempt resumes from the "creating since" checkpoint, no second job', async () => {
    const { ids, updates } = seedAccounts(60);
    const jobsBefore = org.ingestJobsCreated;
    lostCreate();
    let saved: CrmWriteCheckpoint | undefined;
    const cut = new SalesforceWriter(jwt, { ...FAST, bulkThreshold: 10, pacing: { ...FAST.pacing, maxAttempts: 1 } });
    const onCheckpoint = async (checkpoint: CrmWriteCheckpoint) => {
      saved = checkpoint;
    };
    await expect(cut.write({ object: 'Account', updates, onCheckpoint })).rejects.toThrow();
    expect(saved).toEqual({ crm: 'salesforce', creatingSince: expect.any(String) });
    expect(org.ingestJobsCreated - jobsBefore).toBe(1);
    const writer = new SalesforceWriter(jwt, FAST);
    const outcomes = await writer.write({
      object: 'Account',
      updates,
      resume: saved as CrmWriteCheckpoint,
      onCheckpoint,
    });
    expect(org.ingestJobsCreated - jobsBefore).toBe(1);
    expect(saved).toEqual({ crm: 'salesforce', jobId: org.ingestJobs().at(-1)?.id });
    expect(outcomes.filter((o) => o.outcome === 'written')).toHaveLength(60);
    const back = await readBack(ids);
    expect(ids.filter((id, i) => back.get(id)?.['Signal_Count__c'] !== truth(i)['Signal_Count__c'])).toEqual([]);
  });
});

describe("jsforce's own retries", () => {
  it('are not hidden: each 5xx of a GET or PUT is one pause reported through onPause, one call the stand-in answered', async () => {
    const { updates } = seedAccounts(30);
    const mark = org.calls.length;
    org.fail({ method: 'GET', path: '/jobs/ingest/', status: 503, times: 2 });
    org.fail({ method: 'PUT', path: '/batches', status: 502, errorCode: 'SERVER_UNAVAILABLE', times: 1 });
    const pauses: string[] = [];
    const writer = new SalesforceWriter(jwt, { ...FAST, bulkThreshold: 10 });
    const outcomes = await writer.write({ object: 'Account', updates, onPause: (p) => pauses.push(p.reason) });
    expect(outcomes.filter((o) => o.outcome === 'written')).toHaveLength(30);
    const failed = org.calls.slice(mark).filter((call) => call.status >= 500);
    // The stand-in's record: three refused calls; each one a pause the write-back reported, none waited out unseen.
    expect(failed).toHaveLength(3);
    expect(pauses).toHaveLength(failed.length);
    expect(pauses.every((p) => /: (SERVER_UNAVAILABLE|ERROR_HTTP_50\d)$/.test(p))).toBe(true);
  });
});

describe('sessions, outages and limits', () => {
  it('refreshes an expired session through the JWT bearer flow and carries on', async () => {
    const { updates } = seedAccounts(5);
    const writer = new SalesforceWriter(jwt, FAST);
    await writer.write({ object: 'Account', updates: updates.slice(0, 2) });
    const grants = org.tokenGrants;
    org.expireSessions();
    const outcomes = await writer.write({ object: 'Account', updates: updates.slice(2) });
    expect(outcomes.every((o) => o.outcome === 'written')).toBe(true);
    expect(org.tokenGrants - grants).toBe(1);
  });

  it('stops on an expired access token it cannot refresh with a CrmAuthError naming the setting, not the token', async () => {
    const token = org.issueToken();
    const writer = new SalesforceWriter({ kind: 'token', instanceUrl: org.url, accessToken: token }, FAST);
    const { updates } = seedAccounts(2);
    org.expireSessions();
    const error = await writer.write({ object: 'Account', updates }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CrmAuthError);
    expect((error as Error).message).toContain('SALESFORCE_ACCESS_TOKEN');
    expect((error as Error).message).not.toContain(token);
    expect((error as Error).message).not.toContain(token.split('!')[1] as string);
  });

  it('refuses a key the connected app does not know with a CrmAuthError naming the settings, not the key', async () => {
    const other = generateKeyPairSync('rsa', { modulusLength: 2048 })
      .privateKey.export({ type: 'pkcs8', format: 'pem' })
      .toString();
    const writer = new SalesforceWriter({ ...jwt, privateKeyPem: other } as SalesforceAuth, FAST);
    const error = await writer.describe('Account').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CrmAuthError);
    expect((error as Error).message).toMatch(/invalid_grant.*SALESFORCE_PRIVATE_KEY_FILE/);
    expect((error as Error).message).not.toContain(other.split('\n')[1] as string);
  });

  it('pauses through an outage and a 429 burst (reported through onPause) and completes', async () => {
    const { ids, updates } = seedAccounts(300);
    org.fail({ path: '/composite/sobjects', status: 503, times: 2 });
    org.fail({ path: '/composite/sobjects', status: 429, errorCode: 'REQUEST_LIMIT_EXCEEDED', times: 1 });
    org.fail({ path: '/composite/sobjects', status: 503, html: true, times: 1 });
    const pauses: { ms: number; reason: string }[] = [];
    const writer = new SalesforceWriter(jwt, FAST);
    const outcomes = await writer.write({ object: 'Account', updates, onPause: (p) => pauses.push(p) });
    expect(outcomes.every((o) => o.outcome === 'written')).toBe(true);
    expect(pauses.map((p) => p.reason.split(': ').at(-1))).toEqual([
      'SERVER_UNAVAILABLE',
      'SERVER_UNAVAILABLE',
      'REQUEST_LIMIT_EXCEEDED',
      'ERROR_HTTP_503',
    ]);
    expect((await readBack(ids.slice(-1))).get(ids.at(-1) as string)?.['Signal_Count__c']).toBe(
      truth(299)['Signal_Count__c'],
    );
  });

  it('gives up an outage that outlasts its pauses with a retryable CrmUnavailableError', async () => {
    const { updates } = seedAccounts(3);
    org.fail({
      path: '/composite/sobjects',
      status: 500,
      errorCode: 'UNKNOWN_EXCEPTION',
      times: Number.POSITIVE_INFINITY,
    });
    const writer = new SalesforceWriter(jwt, { ...FAST, pacing: { ...FAST.pacing, maxAttempts: 3 } });
    const error = await writer.write({ object: 'Account', updates }).catch((e: unknown) => e);
    org.clearFaults();
    expect(error).toBeInstanceOf(CrmUnavailableError);
    expect((error as CrmUnavailableError).retryable).toBe(true);
  });

  it('slows down near the org\u2019s daily API limit (Sforce-Limit-Info) without failing', async () => {
    const { updates } = seedAccounts(400);
    const saved = org.usage.used;
    org.usage.used = Math.ceil(org.usage.max * 0.95);
    const pauses: string[] = [];
    const writer = new SalesforceWriter(jwt, FAST);
    const outcomes = await writer.write({ object: 'Account', updates, onPause: (p) => pauses.push(p.reason) });
    org.usage.used = saved;
    expect(outcomes.every((o) => o.outcome === 'written')).toBe(true);
    // The first call learns the usage; the second waits.
    expect(pauses).toEqual([expect.stringMatching(/^api-usage=\d+\/100000: near the org/)]);
  });
});

describe('describe, check and read', () => {
  it('maps describe to the kit\u2019s field types, reports the user and scopes, and reads values by id', async () => {
    const writer = new SalesforceWriter(jwt, FAST);
    const fields = new Map((await writer.describe('Account')).map((f) => [f.name, f]));
    expect(fields.get('Signal_Count__c')).toMatchObject({ type: 'number', crmType: 'double', updateable: true });
    expect(fields.get('Signal_Score__c')).toMatchObject({ type: 'number', crmType: 'percent' });
    expect(fields.get('Signal_Last_Seen__c')).toMatchObject({ type: 'date' });
    expect(fields.get('Signal_Detected_At__c')).toMatchObject({ type: 'datetime' });
    expect(fields.get('Signal_Company_Name__c')).toMatchObject({ type: 'string', length: 255 });
    expect(fields.get('Signal_Website__c')).toMatchObject({ type: 'string', crmType: 'url', length: 255 });
    expect(fields.get('Signal_Formula__c')).toMatchObject({ updateable: false });
    expect(await writer.check('Account')).toEqual({
      crm: 'salesforce',
      identity: org.username,
      scopes: ['api'],
      missing: [],
    });
    const [a, b] = org.records.seed('Account', [
      { Signal_Count__c: 4, Signal_Company_Name__c: 'Typed by a person' },
      {},
    ]) as [string, string];
    org.records.markDeleted(b);
    const read = await writer.read('Account', [a, b], ['Signal_Count__c', 'Signal_Company_Name__c']);
    expect([...read]).toEqual([[a, { Signal_Count__c: '4', Signal_Company_Name__c: 'Typed by a person' }]]);
  });
});

describe('a connected app without the api scope', () => {
  it('is reported by check as the missing scope with its fix, and the REST API refuses its session', async () => {
    const narrow = await startSalesforceStandIn({ scopes: ['id', 'refresh_token'] });
    try {
      const auth: SalesforceAuth = {
        kind: 'jwt',
        loginUrl: narrow.loginUrl,
        clientId: narrow.clientId,
        username: narrow.username,
        privateKeyPem: narrow.privateKeyPem as string,
      };
      const writer = new SalesforceWriter(auth, FAST);
      expect(await writer.check('Account')).toEqual({
        crm: 'salesforce',
        identity: narrow.username,
        scopes: ['id', 'refresh_token'],
        missing: [{ what: 'OAuth scope api', fix: expect.stringContaining('Manage user data via APIs (api)') }],
      });
      await expect(writer.describe('Account')).rejects.toBeInstanceOf(CrmAuthError);
    } finally {
      await narrow.close();
    }
  });
});
