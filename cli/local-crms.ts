/**
 * The local CRMs of `signal-kit dev` and `demo`: the HubSpot and Salesforce stand-ins (crm-sandbox/) on 127.0.0.1,
 * seeded with the demo's accounts (examples/crm-export.csv) and holding the kit's fields, so that a night with
 * `--write-back hubspot|salesforce` works against them as it does against the real CRMs. Each CRM gets an export of
 * its own records (its record ids, its headers) to schedule nights on, and the worker's variables that reach it.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import type { SyncKind } from '../activities/sync/types.ts';
import { csvField } from '../activities/tables/encode.ts';
import { kitFields } from '../activities/writeback/fields.ts';
import { createHubspotWriter } from '../connectors/crm/hubspot/index.ts';
import { type HubspotStandIn, startHubspotStandIn } from '../crm-sandbox/hubspot/index.ts';
import { type FieldSpec, type SalesforceStandIn, startSalesforceStandIn } from '../crm-sandbox/salesforce/index.ts';
import { repoRoot } from '../devstack/binaries.ts';

/** One account of the demo's export. */
export interface DemoAccount {
  name: string;
  website: string;
  linkedin: string;
}

export interface LocalCrms {
  hubspot: HubspotStandIn;
  salesforce?: SalesforceStandIn;
  /** The worker's variables that reach these CRMs (`HUBSPOT_*`, `SALESFORCE_*`). */
  env: Record<string, string>;
  /** The seeded accounts exported as each CRM exports them (HubSpot `Record ID`, Salesforce `Id`): file paths. */
  exports: { hubspot: string; salesforce?: string };
  stop(): Promise<void>;
}

/** A CSV file of `rows`, the first the header. */
const csv = (rows: readonly (readonly (string | undefined)[])[]) =>
  rows.map((row) => row.map((cell) => csvField(cell ?? '')).join(',')).join('\n') + '\n';

/** The demo's accounts: examples/crm-export.csv, in file order (at most `limit`). */
export async function demoAccounts(limit = Number.POSITIVE_INFINITY): Promise<DemoAccount[]> {
  const text = await readFile(join(repoRoot(), 'examples', 'crm-export.csv'), 'utf8');
  const rows = parse(text, { columns: true, bom: true }) as Record<string, string>[];
  return rows
    .slice(0, limit)
    .map((r) => ({ name: r['Name'] ?? '', website: r['Website'] ?? '', linkedin: r['LinkedIn'] ?? '' }));
}

const KINDS: readonly SyncKind[] = ['enrich', 'enrich-contacts'];

/** The kit's fields as the Salesforce org holds them (what `signal-kit crm fields salesforce` prints to deploy). */
function salesforceFields(kind: SyncKind): FieldSpec[] {
  return kitFields('salesforce', kind).map((f) =>
    f.type === 'number'
      ? { name: f.name, label: f.label, type: 'double', precision: 18, scale: 0 }
      : f.type === 'datetime'
        ? { name: f.name, label: f.label, type: 'datetime' }
        : { name: f.name, label: f.label, type: 'string', length: f.length ?? 255 },
  );
}

async function seedHubspot(accounts: readonly DemoAccount[], file: string): Promise<HubspotStandIn> {
  const hubspot = await startHubspotStandIn();
  // The kit's properties, as `signal-kit crm fields --create hubspot` creates them.
  const writer = createHubspotWriter({ accessToken: hubspot.token, apiUrl: hubspot.url });
  for (const kind of KINDS) {
    await writer.createProperties(kind === 'enrich' ? 'companies' : 'contacts', kitFields('hubspot', kind));
  }
  const ids = hubspot.plant(
    'companies',
    accounts.map((a) => ({ name: a.name, website: a.website, linkedin_company_page: a.linkedin })),
  );
  const rows = accounts.map((a, i) => [ids[i], a.name, a.website, a.linkedin]);
  await writeFile(file, csv([['Record ID', 'Company name', 'Website URL', 'LinkedIn Company Page'], ...rows]));
  return hubspot;
}

async function seedSalesforce(accounts: readonly DemoAccount[], file: string): Promise<SalesforceStandIn> {
  const salesforce = await startSalesforceStandIn({
    customFields: {
      Account: salesforceFields('enrich'),
      Contact: salesforceFields('enrich-contacts'),
      Lead: salesforceFields('enrich-contacts'),
    },
  });
  const ids = salesforce.records.seed(
    'Account',
    accounts.map((a) => ({ Name: a.name, Website: a.website })),
  );
  const rows = accounts.map((a, i) => [ids[i], a.name, a.website]);
  await writeFile(file, csv([['Id', 'Name', 'Website'], ...rows]));
  return salesforce;
}

/**
 * Starts the CRM stand-ins (Salesforce unless `salesforce: false`) seeded with `accounts`, writing their exports
 * into `dir`.
 */
export async function startLocalCrms(options: {
  accounts: readonly DemoAccount[];
  dir: string;
  salesforce?: boolean;
}): Promise<LocalCrms> {
  const exports = { hubspot: join(options.dir, 'hubspot-companies.csv') };
  const hubspot = await seedHubspot(options.accounts, exports.hubspot);
  const env: Record<string, string> = { HUBSPOT_API_URL: hubspot.url, HUBSPOT_ACCESS_TOKEN: hubspot.token };
  if (options.salesforce === false) return { hubspot, env, exports, stop: () => hubspot.close() };
  const salesforceExport = join(options.dir, 'salesforce-accounts.csv');
  const salesforce = await seedSalesforce(options.accounts, salesforceExport).catch(async (error: unknown) => {
    await hubspot.close();
    throw error;
  });
  Object.assign(env, {
    SALESFORCE_LOGIN_URL: salesforce.loginUrl,
    SALESFORCE_CLIENT_ID: salesforce.clientId,
    SALESFORCE_USERNAME: salesforce.username,
    SALESFORCE_PRIVATE_KEY_FILE: salesforce.privateKeyFile as string,
  });
  return {
    hubspot,
    salesforce,
    env,
    exports: { ...exports, salesforce: salesforceExport },
    stop: async () => {
      await Promise.all([hubspot.close(), salesforce.close()]);
    },
  };
}
