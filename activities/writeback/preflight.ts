import { fieldLabel, salesforceName } from '../../connectors/crm/fields.ts';
import type { CrmFieldInfo, CrmFieldType, CrmName, CrmObject, CrmWriter } from '../../connectors/crm/writer.ts';
import { CrmPreflightError, type CrmProblem } from '../../connectors/errors.ts';
import { rowsTable } from '../../contract/tables/rows.ts';
import type { SyncKind } from '../sync/types.ts';
import { type WriteField, writeFieldsOf, writeObjectOf } from './fields.ts';

/** The CRM field types a rows-table column can be written to (text takes everything, cut to its length). */
const TYPES_OF: Record<string, CrmFieldType[]> = {
  int: ['number', 'string'],
  double: ['number', 'string'],
  timestamp: ['datetime', 'date', 'string'],
};

/** What each CRM's fix for a missing field says. */
const CREATE_FIX: Record<CrmName, string> = {
  hubspot: "run `signal-kit crm fields --create hubspot` (creates the kit's properties in its property group)",
  salesforce:
    'deploy the field `signal-kit crm fields salesforce` prints (Setup → Object Manager, or the Metadata API)',
};

/**
 * Checks, before any paid call of a night and at `schedule create`, that the CRM takes the write-back: the token's
 * scopes for the object, then each field asked (it exists, it is updateable, its type takes the column's values).
 * Returns the object's fields by name; throws `CrmPreflightError` naming every problem and its fix.
 */
export async function preflight(
  writer: CrmWriter,
  kind: SyncKind,
  object: CrmObject,
  fields: readonly WriteField[],
): Promise<Map<string, CrmFieldInfo>> {
  const check = await writer.check(object);
  const problems: CrmProblem[] = check.missing.map((m) => ({ what: m.what, problem: 'missing', fix: m.fix }));
  if (problems.length > 0) throw new CrmPreflightError(writer.crm, object, problems);
  const described = new Map((await writer.describe(object)).map((field) => [field.name, field]));
  const columns = new Map(rowsTable(kind).columns.map((column) => [column.name, column]));
  for (const { column, field } of fields) {
    const source = columns.get(column);
    if (source === undefined) {
      const known = [...columns.keys()].join(', ');
      problems.push({ what: column, problem: `not a column of ${kind}'s rows`, fix: `--write-fields takes: ${known}` });
      continue;
    }
    const info = described.get(field);
    const label = fieldLabel(salesforceName(column));
    if (info === undefined) {
      problems.push({
        what: field,
        problem: `no such field on ${object}`,
        fix: `${CREATE_FIX[writer.crm]} (${label})`,
      });
    } else if (!info.updateable) {
      problems.push({
        what: field,
        problem: `read-only (${info.crmType})`,
        fix: 'make it an editable field for the integration user',
      });
    } else if (!(TYPES_OF[source.type] ?? ['string']).includes(info.type) && info.type !== 'string') {
      const wanted = (TYPES_OF[source.type] ?? ['string']).join(' or ');
      problems.push({
        what: field,
        problem: `type ${info.crmType}, the kit writes ${source.type}`,
        fix: `make it ${wanted}`,
      });
    }
  }
  if (problems.length > 0) throw new CrmPreflightError(writer.crm, object, problems);
  return described;
}

/** What the pre-flight of a schedule's write-back checks: the CRM, the kind, the fields and policies asked. */
export interface WriteBackPreflightRequest {
  crm: CrmName;
  kind: SyncKind;
  fields?: string[];
  /** Salesforce contacts exports of leads: `Lead` (default from the kind: `Contact`). */
  object?: CrmObject;
}

/**
 * The pre-flight alone, before a night's paid calls (and at `schedule create`): throws `CrmPreflightError` naming
 * every problem; returns the object and the fields it checked.
 */
export async function preflightWriteBack(
  writer: CrmWriter,
  request: WriteBackPreflightRequest,
): Promise<{ object: CrmObject; fields: string[] }> {
  const object = request.object ?? writeObjectOf(writer.crm, request.kind, []);
  const fields = writeFieldsOf(writer.crm, request.fields, undefined);
  await preflight(writer, request.kind, object, fields);
  return { object, fields: fields.map((f) => f.field) };
}
