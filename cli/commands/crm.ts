/**
 * `signal-kit crm check hubspot|salesforce` and `signal-kit crm fields [--create] hubspot|salesforce`: the CRM a
 * write-back goes to, tested and prepared from this process's CRM settings (the same variables as the worker's).
 */

import type { SyncKind } from '../../activities/sync/types.ts';
import { kitFields, writeObjectOf } from '../../activities/writeback/fields.ts';
import { preflightWriteBack } from '../../activities/writeback/preflight.ts';
import type { HubspotWriter } from '../../connectors/crm/hubspot/index.ts';
import { salesforceFieldMetadata } from '../../connectors/crm/salesforce/index.ts';
import type { CrmName } from '../../connectors/crm/writer.ts';
import { UsageError } from '../../connectors/errors.ts';
import { crmWritersFrom } from '../../workers/crm-writers.ts';

export interface CrmFlags {
  kind?: string;
  writeFields?: string;
  create?: boolean;
}

function crmOf(value: string | undefined): CrmName {
  if (value === 'hubspot' || value === 'salesforce') return value;
  throw new UsageError(`the CRM must be hubspot or salesforce, got "${value ?? ''}"`);
}

function kindOf(value: string | undefined): SyncKind {
  if (value === undefined || value === 'enrich' || value === 'enrich-contacts') return value ?? 'enrich';
  throw new UsageError(`--kind must be enrich or enrich-contacts, got "${value}"`);
}

const fieldsOf = (flags: CrmFlags) =>
  flags.writeFields
    ?.split(',')
    .map((f) => f.trim())
    .filter(Boolean);

/** Connection, scopes and every field a write-back needs; exit 2 (`CrmPreflightError`) naming each problem. */
export async function runCrmCheck(crmName: string | undefined, flags: CrmFlags): Promise<number> {
  const crm = crmOf(crmName);
  const kind = kindOf(flags.kind);
  const writer = crmWritersFrom()(crm);
  const fields = fieldsOf(flags);
  const checked = await preflightWriteBack(writer, { crm, kind, ...(fields ? { fields } : {}) });
  const connection = await writer.check(checked.object);
  console.log(JSON.stringify({ crm, identity: connection.identity, ...checked, ok: true }, null, 2));
  return 0;
}

/** HubSpot: the kit's properties, created with `--create`; Salesforce: the field metadata to deploy, printed. */
export async function runCrmFields(crmName: string | undefined, flags: CrmFlags): Promise<number> {
  const crm = crmOf(crmName);
  const kind = kindOf(flags.kind);
  const object = writeObjectOf(crm, kind, []);
  const fields = kitFields(crm, kind, fieldsOf(flags));
  if (crm === 'salesforce') {
    if (flags.create) throw new UsageError('--create applies to hubspot; deploy the metadata printed for salesforce');
    process.stdout.write(salesforceFieldMetadata(object, fields));
    return 0;
  }
  if (!flags.create) {
    console.log(JSON.stringify({ crm, object, fields }, null, 2));
    return 0;
  }
  const writer = crmWritersFrom()(crm) as HubspotWriter;
  console.log(JSON.stringify({ crm, object, created: await writer.createProperties(object, fields) }, null, 2));
  return 0;
}
