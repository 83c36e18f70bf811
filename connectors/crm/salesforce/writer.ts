/**
 * The kit's Salesforce writer, through jsforce: `write` uses sObject Collections (200 records a call) for a night
 * of up to `bulkThreshold` records and one Bulk API 2.0 ingest job above it (Salesforce advises Bulk API past 2,000
 * records), or whenever a cut ingest job is resumed; `describe` and `check` read the object's describe and the
 * session's user; `read` retrieves records by id (sObject Collections retrieve, 2,000 ids a call).
 */
import type {
  CrmConnectionCheck,
  CrmFieldInfo,
  CrmObject,
  CrmWriteOutcome,
  CrmWriteRequest,
  CrmWriter,
} from '../writer.ts';
import { type OpenedConnection, openConnection, type SalesforceAuth } from './auth.ts';
import { writeByCollections } from './collections.ts';
import { type DescribedField, fieldInfo } from './describe.ts';
import { DEFAULT_INGEST, type IngestOptions, writeByIngestJob } from './ingest.ts';
import { DEFAULT_PACING, type Pacer, type PacingOptions, paced } from './pacing.ts';

export interface SalesforceWriterOptions {
  /** Past this many updates a night goes through one ingest job (default 2,000). */
  bulkThreshold?: number;
  pacing?: Partial<PacingOptions>;
  ingest?: Partial<IngestOptions>;
  version?: string;
}

/** sObject Collections retrieve takes at most 2,000 ids a call. */
const RETRIEVE_SIZE = 2000;

function text(value: unknown): string | null {
  if (value === null || value === undefined || value === '') return null;
  return typeof value === 'string' ? value : String(value);
}

export class SalesforceWriter implements CrmWriter {
  readonly crm = 'salesforce' as const;
  private readonly auth: SalesforceAuth;
  private readonly options: SalesforceWriterOptions;
  private opened: Promise<OpenedConnection> | undefined;
  /** Salesforce calls made so far (each attempt counts; the token endpoint's do not). */
  calls = 0;

  constructor(auth: SalesforceAuth, options: SalesforceWriterOptions = {}) {
    this.auth = auth;
    this.options = options;
  }

  private async pacer(onPause?: CrmWriteRequest['onPause']): Promise<Pacer> {
    this.opened ??= openConnection(this.auth, this.options.version);
    const { conn } = await this.opened.catch((error: unknown) => {
      this.opened = undefined;
      throw error;
    });
    return { conn, options: { ...DEFAULT_PACING, ...this.options.pacing }, onPause, calls: 0 };
  }

  private async run<T>(onPause: CrmWriteRequest['onPause'], work: (pacer: Pacer) => Promise<T>): Promise<T> {
    const pacer = await this.pacer(onPause);
    try {
      return await work(pacer);
    } finally {
      this.calls += pacer.calls;
    }
  }

  async describe(object: CrmObject): Promise<CrmFieldInfo[]> {
    return this.run(undefined, async (pacer) => {
      const described = await paced(pacer, `describe ${object}`, () => pacer.conn.describe(object));
      return (described.fields as unknown as DescribedField[]).map(fieldInfo);
    });
  }

  async check(object: CrmObject): Promise<CrmConnectionCheck> {
    return this.run(undefined, async (pacer) => {
      const user = (await paced(pacer, 'userinfo', () => pacer.conn.request('/services/oauth2/userinfo'))) as {
        preferred_username?: string;
      };
      const granted = (await this.opened)?.scopes;
      const identity = user.preferred_username ?? '';
      if (granted && !granted.includes('api') && !granted.includes('full')) {
        // Without the scope every REST call is refused: nothing more to look at.
        const fix = 'add "Manage user data via APIs (api)" to the connected app\u2019s OAuth scopes';
        return { crm: 'salesforce', identity, scopes: granted, missing: [{ what: 'OAuth scope api', fix }] };
      }
      const described = await paced(pacer, `describe ${object}`, () => pacer.conn.describe(object));
      const missing: CrmConnectionCheck['missing'] = described.updateable
        ? []
        : [
            {
              what: `edit access to ${object}`,
              fix: `give the integration user Edit on ${object} (its profile or a permission set)`,
            },
          ];
      return { crm: 'salesforce', identity, scopes: granted ?? [], missing };
    });
  }

  async read(object: CrmObject, ids: string[], fields: string[]): Promise<Map<string, Record<string, string | null>>> {
    return this.run(undefined, async (pacer) => {
      const found = new Map<string, Record<string, string | null>>();
      for (let start = 0; start < ids.length; start += RETRIEVE_SIZE) {
        const chunk = ids.slice(start, start + RETRIEVE_SIZE);
        const records = (await paced(pacer, `retrieve ${object}`, () =>
          pacer.conn.sobject(object).retrieve(chunk, { fields }),
        )) as unknown as (Record<string, unknown> | null)[];
        chunk.forEach((id, i) => {
          const record = records[i];
          if (record) found.set(id, Object.fromEntries(fields.map((f) => [f, text(record[f])])));
        });
      }
      return found;
    });
  }

  async write(request: CrmWriteRequest): Promise<CrmWriteOutcome[]> {
    if (request.updates.length === 0) return [];
    return this.run(request.onPause, (pacer) => {
      const bulk = request.resume !== undefined || request.updates.length > (this.options.bulkThreshold ?? 2000);
      if (!bulk) return writeByCollections(pacer, request.object, request.updates);
      const ingest = { ...DEFAULT_INGEST, ...this.options.ingest };
      return writeByIngestJob(pacer, request.object, request.updates, request, ingest);
    });
  }
}
