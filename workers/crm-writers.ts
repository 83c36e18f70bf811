/**
 * The worker's CRM writers, made from its environment the first time a write-back asks for one (a worker that never
 * writes back needs no CRM settings). The tokens and keys stay here: a workflow names only the CRM.
 */
import { parseHubspotConfig } from '../config/crm.ts';
import { parseSalesforceAuth } from '../config/salesforce.ts';
import { createHubspotWriter } from '../connectors/crm/hubspot/index.ts';
import { SalesforceWriter } from '../connectors/crm/salesforce/writer.ts';
import type { CrmName, CrmWriter } from '../connectors/crm/writer.ts';
import { ConfigError } from '../connectors/errors.ts';

type Env = Record<string, string | undefined>;

export function crmWritersFrom(env: Env = process.env): (crm: CrmName) => CrmWriter {
  const made = new Map<CrmName, CrmWriter>();
  return (crm) => {
    let writer = made.get(crm);
    if (writer === undefined) {
      writer = crm === 'hubspot' ? createHubspotWriter(parseHubspotConfig(env)) : salesforceWriter(env);
      made.set(crm, writer);
    }
    return writer;
  };
}

function salesforceWriter(env: Env): CrmWriter {
  const auth = parseSalesforceAuth(env);
  if (auth === undefined) {
    throw new ConfigError(
      'the worker has no Salesforce settings: set SALESFORCE_CLIENT_ID, SALESFORCE_USERNAME and ' +
        'SALESFORCE_PRIVATE_KEY_FILE (or SALESFORCE_INSTANCE_URL and SALESFORCE_ACCESS_TOKEN); see docs/crm-write-back.md',
    );
  }
  return new SalesforceWriter(auth);
}
