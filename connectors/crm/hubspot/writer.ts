/**
 * The kit's HubSpot writer, through the official client: batch update by record id, 100 records a call, paced by
 * HubSpot's own limits (pacing.ts); `read` by batch read (for fill-empty); `describe` and `check` through the
 * properties API and the private app's token info. Update only: it never creates or archives a record.
 *
 * A cut write carries no checkpoint: an update by id with the same values is idempotent, so a write asked again
 * sends every batch again (at most the cut batches twice) and every record gets its outcome; `resume` is ignored.
 */
import { CrmAuthError, CrmRequestError, CrmUnavailableError } from '../../errors.ts';
import type { CrmConnectionCheck, CrmObject, CrmWriteOutcome, CrmWriteRequest, CrmWriter } from '../writer.ts';
import { failureOf, type HubspotApis, type HubspotConnection, hubspotClient, hubspotError } from './client.ts';
import { batchOutcomes, rejected } from './outcomes.ts';
import { HubspotPacer, type PacingOptions } from './pacing.ts';
import {
  createKitProperties,
  describeProperties,
  type HubspotObject,
  isHubspotObject,
  type KitProperty,
  type KitPropertyOutcome,
} from './properties.ts';

/** HubSpot takes at most 100 inputs in one batch call. */
export const HUBSPOT_BATCH_SIZE = 100;

export type HubspotWriterOptions = Partial<Omit<PacingOptions, 'onPause' | 'onCall'>>;

function objectOf(object: CrmObject): HubspotObject {
  if (!isHubspotObject(object)) {
    throw new CrmRequestError(
      'hubspot',
      'WRONG_OBJECT',
      `${object} is a Salesforce object; HubSpot writes companies or contacts`,
    );
  }
  return object;
}

function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

type Update = CrmWriteRequest['updates'][number];

const asProperty = (value: Update['values'][string]): string => (value === null ? '' : String(value));

export class HubspotWriter implements CrmWriter {
  readonly crm = 'hubspot' as const;
  private readonly apis: HubspotApis;
  private readonly connection: HubspotConnection;
  private readonly options: HubspotWriterOptions;
  /** Calls sent to HubSpot by this writer, refused ones included. */
  calls = 0;

  constructor(connection: HubspotConnection, options: HubspotWriterOptions = {}) {
    this.connection = connection;
    this.apis = hubspotClient(connection);
    this.options = options;
  }

  private pacer(onPause?: CrmWriteRequest['onPause']): HubspotPacer {
    return new HubspotPacer({ ...this.options, ...(onPause ? { onPause } : {}), onCall: () => this.calls++ });
  }

  async check(object: CrmObject): Promise<CrmConnectionCheck> {
    const o = objectOf(object);
    const response = await this.apis.client
      .apiRequest({
        method: 'POST',
        path: '/oauth/v2/private-apps/get/access-token-info',
        body: { tokenKey: this.connection.accessToken },
      })
      .catch((error: unknown) => {
        throw hubspotError(error, 'checking the access token');
      });
    this.calls++;
    const body = (await response.json().catch(() => ({}))) as { hubId?: number; scopes?: unknown };
    if (response.status === 401 || response.status === 403) {
      throw new CrmAuthError(
        'hubspot',
        'INVALID_AUTHENTICATION',
        'the access token was refused; set HUBSPOT_ACCESS_TOKEN to a valid private-app access token',
      );
    }
    if (!response.ok) throw hubspotError({ code: response.status, body, headers: {} }, 'checking the access token');
    const scopes = Array.isArray(body.scopes) ? body.scopes.filter((s): s is string => typeof s === 'string') : [];
    const needed = [`crm.objects.${o}.write`, `crm.objects.${o}.read`, `crm.schemas.${o}.read`];
    const missing = needed
      .filter((scope) => !scopes.includes(scope))
      .map((scope) => ({
        what: scope,
        fix: `add the scope ${scope} to the private app (Settings > Integrations > Private Apps > the app > Scopes)`,
      }));
    return { crm: 'hubspot', identity: `HubSpot portal ${body.hubId ?? 'unknown'}`, scopes, missing };
  }

  describe(object: CrmObject) {
    return describeProperties(this.apis, this.pacer(), objectOf(object));
  }

  /** Creates the kit's properties missing from `object`, in the kit's property group. */
  createProperties(object: CrmObject, properties: readonly KitProperty[]): Promise<KitPropertyOutcome[]> {
    return createKitProperties(this.apis, this.pacer(), objectOf(object), properties);
  }

  async read(object: CrmObject, ids: string[], fields: string[]) {
    const o = objectOf(object);
    const pacer = this.pacer();
    const found = new Map<string, Record<string, string | null>>();
    for (const batch of chunks([...new Set(ids)], HUBSPOT_BATCH_SIZE)) {
      const answer = await pacer
        .send(() =>
          this.apis.objects[o].readWithHttpInfo({
            inputs: batch.map((id) => ({ id })),
            properties: fields,
            propertiesWithHistory: [],
          }),
        )
        .catch((error: unknown) => {
          throw hubspotError(error, `reading ${batch.length} ${o}`);
        });
      for (const record of answer.data.results) {
        found.set(record.id, Object.fromEntries(fields.map((f) => [f, record.properties[f] ?? null])));
      }
    }
    return found;
  }

  async write(request: CrmWriteRequest): Promise<CrmWriteOutcome[]> {
    const o = objectOf(request.object);
    const pacer = this.pacer(request.onPause);
    const outcomes: CrmWriteOutcome[] = [];
    const queue = chunks(request.updates, HUBSPOT_BATCH_SIZE);
    while (queue.length) {
      const batch = queue.shift() as Update[];
      try {
        outcomes.push(...(await this.updateBatch(pacer, o, batch, queue)));
      } catch (error) {
        if (!(error instanceof CrmUnavailableError)) throw error;
        const reason = `${error.code}: ${error.message}`;
        for (const update of [batch, ...queue].flat())
          outcomes.push({ id: update.id, outcome: 'not_attempted', reason });
        break;
      }
    }
    return outcomes;
  }

  /**
   * One batch update. A batch HubSpot refuses as a whole for a value (400 VALIDATION_ERROR) is split in halves put
   * back at the front of the queue, down to the one record refused, so the others are still written.
   */
  private async updateBatch(pacer: HubspotPacer, o: HubspotObject, batch: Update[], queue: Update[][]) {
    const inputs = batch.map((u) => ({
      id: u.id,
      properties: Object.fromEntries(Object.entries(u.values).map(([k, v]) => [k, asProperty(v)])),
    }));
    try {
      const answer = await pacer.send(() => this.apis.objects[o].updateWithHttpInfo({ inputs }));
      return batchOutcomes(
        batch.map((u) => u.id),
        answer.httpStatusCode,
        answer.data,
      );
    } catch (error) {
      const failure = failureOf(error);
      if (failure?.status === 400 && failure.category === 'VALIDATION_ERROR') {
        if (batch.length === 1) return [rejected((batch[0] as Update).id, failure.category, failure.message)];
        const half = Math.ceil(batch.length / 2);
        queue.unshift(batch.slice(0, half), batch.slice(half));
        return [];
      }
      throw hubspotError(error, `updating ${batch.length} ${o}`);
    }
  }
}
