/**
 * A local Salesforce org for tests, benchmarks and `signal-kit dev`, written from Salesforce's REST API, Bulk API 2.0
 * and OAuth 2.0 JWT bearer flow references, so that the official client (`jsforce`) works against it unchanged.
 * It serves the login URL and the instance on one address of 127.0.0.1. It imports nothing of the kit.
 *
 * ```ts
 * const org = await startSalesforceStandIn();
 * const [id] = org.records.seed('Account', [{ Name: 'Acme' }]);
 * const conn = new Connection({ instanceUrl: org.url, accessToken: org.accessToken, version: org.version });
 * await conn.sobject('Account').update([{ Id: id, Signal_Count__c: 3 }]);
 * ```
 */
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Sessions } from './auth.ts';
import { type IngestJob, IngestJobs } from './bulk.ts';
import { Faults, type RequestFault } from './faults.ts';
import { DEFAULT_CUSTOM_FIELDS, type FieldSpec, fieldSpec, OBJECTS, type ObjectName, objectSchema } from './fields.ts';
import { RecordStore, type StoredRecord, type ValidationRule } from './records.ts';
import { apiRoutes, otherRoutes } from './routes.ts';
import { type ApiUsage, type CallRecord, createStandInServer } from './server.ts';

export { JWT_BEARER_GRANT } from './auth.ts';
export type { RequestFault } from './faults.ts';
export type { FieldSpec, ObjectName } from './fields.ts';
export { DEFAULT_CUSTOM_FIELDS } from './fields.ts';
export type { StoredRecord, ValidationRule } from './records.ts';
export type { CallRecord } from './server.ts';

export interface SalesforceStandInOptions {
  /** 0 (default) picks a free port; the server binds 127.0.0.1 only. */
  port?: number;
  /** The connected app's consumer key (default `3MVG9standin.signalkit`). */
  clientId?: string;
  /** The integration user's name (default `integration@signal-kit.example`). */
  username?: string;
  /** The connected app's certificate key (PEM). Default: a new RSA key pair, whose private key is handed back. */
  publicKeyPem?: string;
  /** Custom fields per object (default `DEFAULT_CUSTOM_FIELDS` on each). */
  customFields?: Partial<Record<ObjectName, FieldSpec[]>>;
  /** The org's daily API request limit (default 100,000) and the calls already used today (default 0). */
  dailyApiLimit?: number;
  apiUsage?: number;
  /**
   * The OAuth scopes the connected app grants (default `['api']`). Without `api` (or `full`) a session may read
   * userinfo but every REST call answers 401 "This session is not valid for use with the REST API".
   */
  scopes?: string[];
  /** A session's life (default 2 hours). */
  sessionTtlMs?: number;
  /** How long a closed ingest job waits before it is processed (default 0). */
  jobProcessingMs?: number;
  /** Epoch ms (default `Date.now`). */
  clock?: () => number;
}

export interface SalesforceStandIn {
  /** The instance URL, also the login URL (the token endpoint is `<url>/services/oauth2/token`). */
  url: string;
  loginUrl: string;
  /** The API version the stand-in reports in its URLs (it answers any `vNN.N`). */
  version: string;
  clientId: string;
  username: string;
  /** The connected app's private key (absent when `publicKeyPem` was given), also written to `privateKeyFile` (0600). */
  privateKeyPem?: string;
  privateKeyFile?: string;
  /** A session issued at start, for `SALESFORCE_INSTANCE_URL` + `SALESFORCE_ACCESS_TOKEN`. */
  accessToken: string;
  /** Another session. */
  issueToken(): string;
  /** Ends every session now: the next call of each gets 401 INVALID_SESSION_ID. */
  expireSessions(): void;
  records: {
    seed(object: ObjectName, values: StoredRecord[]): string[];
    get(id: string): StoredRecord | undefined;
    /** A person's edit in the UI (not an API call). */
    edit(id: string, values: StoredRecord): void;
    markDeleted(id: string): void;
    /** The row stays locked for `attempts` more updates (default: until `unlock`). */
    lock(id: string, attempts?: number): void;
    unlock(id: string): void;
    addValidationRule(rule: ValidationRule): void;
  };
  /** Arms a fault for the next matching calls (see `RequestFault`). */
  fail(fault: RequestFault): void;
  clearFaults(): void;
  /** Calls stalled by a `stall` fault so far. */
  readonly stalledCalls: number;
  /** Every session token issued (through the JWT grant or `issueToken`). */
  sessionTokens(): string[];
  /** The daily API usage reported in `Sforce-Limit-Info`; tests may set `used`. */
  usage: ApiUsage;
  /** Every call answered, in order (the token endpoint's too). */
  calls: CallRecord[];
  /** Ingest jobs created since start. */
  readonly ingestJobsCreated: number;
  /** Looks at an ingest job's state that found it still being processed: the org's processing time, not waste. */
  readonly ingestChecksWhileProcessing: number;
  ingestJobs(): IngestJob[];
  /** Successful JWT bearer grants (a refresh is one). */
  readonly tokenGrants: number;
  close(): Promise<void>;
}

const VERSION = '62.0';

function keys(publicKeyPem: string | undefined): { publicKeyPem: string; privateKeyPem?: string } {
  if (publicKeyPem !== undefined) return { publicKeyPem };
  const pair = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return {
    publicKeyPem: pair.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    privateKeyPem: pair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  };
}

function schemas(custom: SalesforceStandInOptions['customFields']) {
  return new Map(
    OBJECTS.map((name) => [name, objectSchema(name, fieldSpec.array().parse(custom?.[name] ?? DEFAULT_CUSTOM_FIELDS))]),
  );
}

async function listen(server: import('node:http').Server, port: number): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

export async function startSalesforceStandIn(options: SalesforceStandInOptions = {}): Promise<SalesforceStandIn> {
  const now = options.clock ?? Date.now;
  const clientId = options.clientId ?? '3MVG9standin.signalkit';
  const username = options.username ?? 'integration@signal-kit.example';
  const pair = keys(options.publicKeyPem);
  const store = new RecordStore(schemas(options.customFields), now);
  const jobs = new IngestJobs(store, now, { processingMs: options.jobProcessingMs ?? 0 });
  const usage: ApiUsage = { used: options.apiUsage ?? 0, max: options.dailyApiLimit ?? 100_000 };
  const faults = new Faults();
  const calls: CallRecord[] = [];
  const who = { orgId: '00DDn0000000001', userId: '005Dn0000000001', username, loginUrl: '' };
  const app = {
    clientId,
    username,
    publicKeyPem: pair.publicKeyPem,
    loginUrl: '',
    orgId: who.orgId,
    userId: who.userId,
  };
  const sessions = new Sessions(app, options.sessionTtlMs ?? 2 * 3600_000, now);
  if (options.scopes) sessions.scopes = options.scopes;
  const { server, closeAll } = createStandInServer({
    sessions,
    faults,
    usage,
    calls,
    api: apiRoutes(store, jobs, usage),
    other: otherRoutes(sessions, who),
  });
  const url = await listen(server, options.port ?? 0);
  app.loginUrl = url;
  who.loginUrl = url;
  let keyDir: string | undefined;
  let privateKeyFile: string | undefined;
  if (pair.privateKeyPem !== undefined) {
    keyDir = mkdtempSync(join(tmpdir(), 'sf-standin-'));
    privateKeyFile = join(keyDir, 'server.key');
    writeFileSync(privateKeyFile, pair.privateKeyPem, { mode: 0o600 });
  }
  return {
    url,
    loginUrl: url,
    version: VERSION,
    clientId,
    username,
    ...(pair.privateKeyPem !== undefined ? { privateKeyPem: pair.privateKeyPem, privateKeyFile } : {}),
    accessToken: sessions.issue(),
    issueToken: () => sessions.issue(),
    expireSessions: () => sessions.expireAll(),
    records: {
      seed: (object, values) => store.seed(object, values),
      get: (id) => store.get(id),
      edit: (id, values) => store.edit(id, values),
      markDeleted: (id) => store.markDeleted(id),
      lock: (id, attempts) => store.lock(id, attempts),
      unlock: (id) => store.unlock(id),
      addValidationRule: (rule) => store.addValidationRule(rule),
    },
    fail: (fault) => faults.add(fault),
    clearFaults: () => faults.clear(),
    get stalledCalls() {
      return faults.stalled;
    },
    sessionTokens: () => sessions.issued(),
    usage,
    calls,
    get ingestJobsCreated() {
      return jobs.created;
    },
    get ingestChecksWhileProcessing() {
      return jobs.checksWhileProcessing;
    },
    ingestJobs: () => jobs.all(),
    get tokenGrants() {
      return sessions.grants;
    },
    async close() {
      jobs.close();
      closeAll();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      if (keyDir !== undefined) rmSync(keyDir, { recursive: true, force: true });
    },
  };
}
