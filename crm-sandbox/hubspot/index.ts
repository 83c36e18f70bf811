/**
 * A local stand-in for HubSpot's CRM API v3 on 127.0.0.1, written from HubSpot's published reference so that the
 * official client (`@hubspot/api-client`, `new Client({ accessToken, basePath: url })`) works against it unchanged:
 * private-app bearer tokens with scopes, batch read/create/update of companies and contacts (100 inputs a call, 207
 * with per-record errors), the properties API and its groups, the ten-second and daily limits with their headers
 * and 429s, and faults on demand. It holds its records so tests read them back. It imports nothing from the kit.
 */
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { type Fault, Faults } from './faults.ts';
import { DEFAULT_RATE_LIMITS, PortalLimits } from './limits.ts';
import { objectRoutes } from './objects.ts';
import { propertyRoutes } from './properties.ts';
import type { HubspotObject } from './schema.ts';
import { type CallRecord, createHubspotServer } from './server.ts';
import { PortalStore, type RecordRefusal, type StoredRecord } from './store.ts';
import { ALL_SCOPES, Tokens } from './tokens.ts';

export type { Fault } from './faults.ts';
export type { RateLimitOptions } from './limits.ts';
export { MAX_BATCH_INPUTS } from './objects.ts';
export type { HubspotObject, PropertyType } from './schema.ts';
export type { CallRecord } from './server.ts';
export type { RecordRefusal } from './store.ts';
export { ALL_SCOPES } from './tokens.ts';

const optionsSchema = z.object({
  port: z.number().int().min(0).max(65_535).default(0),
  portalId: z.number().int().positive().default(24_681_357),
  /** The first token's scopes (default every scope a write-back could need). */
  scopes: z.array(z.string()).default(ALL_SCOPES),
  /** The first token itself (default a fresh `pat-na1-…`). */
  token: z.string().min(1).optional(),
  rateLimit: z
    .object({
      perInterval: z.number().min(0).default(DEFAULT_RATE_LIMITS.perInterval),
      intervalMs: z.number().int().positive().default(DEFAULT_RATE_LIMITS.intervalMs),
      daily: z.number().int().min(0).default(DEFAULT_RATE_LIMITS.daily),
    })
    .default(DEFAULT_RATE_LIMITS),
  /** A value HubSpot refuses in a batch update: its record alone refused in a 207 (default), or the whole batch 400. */
  batchValidation: z.enum(['per-record', 'whole-batch']).default('per-record'),
  clock: z.custom<() => number>((v) => typeof v === 'function').optional(),
});

export type HubspotStandInOptions = z.input<typeof optionsSchema>;

/** A record as a test plants or reads it: its id and every property it holds. */
export interface RecordView {
  id: string;
  properties: Record<string, string>;
  archived: boolean;
}

export interface HubspotStandIn {
  /** The base URL to give the client as `basePath`. */
  url: string;
  /** A private-app token with the scopes asked for. */
  token: string;
  portalId: number;
  /** Another token, with these scopes. */
  addToken(scopes: string[]): string;
  /** The token's calls answer 401 EXPIRED_AUTHENTICATION from now on. */
  expireToken(token: string): void;
  /** The next calls answered with the fault's status. */
  fault(fault: Fault): void;
  /** Every fault and stall still armed, dropped. */
  clearFaults(): void;
  /** After `after` calls whose path contains `path`, the next `times` are never read nor answered until their caller goes away. */
  stall(path: string, times?: number, after?: number): void;
  /** Calls stalled so far. */
  readonly stalledCalls: number;
  /** Records created as a person would in HubSpot's screens (no API call counted). */
  plant(object: HubspotObject, records: Record<string, string>[]): string[];
  /** Every record of the object, archived ones too. */
  records(object: HubspotObject): RecordView[];
  record(object: HubspotObject, id: string): RecordView | undefined;
  /** Deletes a record (HubSpot archives it: updates then answer OBJECT_NOT_FOUND). */
  archive(object: HubspotObject, id: string): void;
  /** The record's updates refused with this error (a validation rule, say) until cleared with undefined. */
  refuse(object: HubspotObject, id: string, refusal: RecordRefusal | undefined): void;
  /** Every API call answered, in order. */
  calls(): CallRecord[];
  close(): Promise<void>;
}

function view(record: StoredRecord): RecordView {
  return { id: record.id, properties: Object.fromEntries(record.properties), archived: record.archived };
}

export async function startHubspotStandIn(input: HubspotStandInOptions = {}): Promise<HubspotStandIn> {
  const options = optionsSchema.parse(input);
  const clock = options.clock ?? Date.now;
  const store = new PortalStore(clock);
  const tokens = new Tokens();
  const faults = new Faults();
  const limits = new PortalLimits(options.rateLimit, clock);
  const calls: CallRecord[] = [];
  const first = tokens.add(options.scopes, options.token);
  const routes = [...objectRoutes(store, options.batchValidation), ...propertyRoutes(store)];
  const { server, closeAll } = createHubspotServer({
    routes,
    tokens,
    limits,
    faults,
    portalId: options.portalId,
    calls,
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    token: first.token,
    portalId: options.portalId,
    addToken: (scopes) => tokens.add(scopes).token,
    expireToken: (token) => tokens.expire(token),
    fault: (fault) => faults.add(fault),
    clearFaults: () => faults.clear(),
    stall: (path, times, after) => faults.stall(path, times, after),
    get stalledCalls() {
      return faults.stalled;
    },
    plant: (object, records) =>
      records.map((values) => {
        const checked = store.checkValues(object, values);
        if (Array.isArray(checked)) throw new Error(checked.map((e) => e.message).join('; '));
        return store.create(object, checked).id;
      }),
    records: (object) => store.records(object).map((r) => view(r)),
    record: (object, id) => {
      const found = store.records(object).find((r) => r.id === id);
      return found && view(found);
    },
    archive: (object, id) => void store.archive(object, id),
    refuse: (object, id, refusal) => store.refuse(object, id, refusal),
    calls: () => [...calls],
    close: () =>
      new Promise<void>((resolve) => {
        closeAll();
        server.close(() => resolve());
      }),
  };
}
