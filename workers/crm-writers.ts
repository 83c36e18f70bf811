/**
 * The worker's CRM writers, made from its environment the first time a write-back asks for one (a worker that never
 * writes back needs no CRM settings). The tokens and keys stay here: a workflow names only the CRM.
 */
import { readFileSync } from 'node:fs';
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

/**
 * The CRM secrets of the worker's environment, for its logger to cut out of every line should one slip into a message:
 * the HubSpot and Salesforce access tokens and each line of the Salesforce private key (a JSON log line shows the key
 * with its line breaks escaped). The sessions the JWT flow obtains are never logged nor put in an error.
 */
export function crmSecretsOf(env: Env = process.env): string[] {
  const secrets = [env['HUBSPOT_ACCESS_TOKEN'] ?? '', env['SALESFORCE_ACCESS_TOKEN'] ?? ''];
  const keyFile = env['SALESFORCE_PRIVATE_KEY_FILE'];
  if (keyFile) {
    try {
      const lines = readFileSync(keyFile, 'utf8').split(/\r?\n/);
      secrets.push(...lines.filter((line) => line.length >= 16 && !line.startsWith('-----')));
    } catch {
      // An unreadable key is reported when the write-back asks for it; nothing of it can be logged meanwhile.
    }
  }
  return secrets.filter((secret) => secret.length > 0);
}
