/**
 * The names of rows.csv's columns, as docs/crm-round-trip.md promises them: the field list a user creates once in
 * Salesforce and HubSpot is the list the code writes (every enrichment column of every kind, no more), each
 * Salesforce name a valid custom-field API name, and the id column's header choosing the names.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { columnOfField, crmColumnName, crmDialectOf, crmFieldName } from '../../../connectors/crm/fields.ts';
import { type CrmInputColumns, crmFileColumns, crmKeptColumns } from '../../../connectors/crm/import-file.ts';
import { rowsTable } from '../../../contract/tables/rows.ts';
import { repoRoot } from '../../helpers/cli.ts';

const KINDS = ['enrich', 'enrich-contacts', 'verify-emails'] as const;

const fileOf = (kind: (typeof KINDS)[number], input: CrmInputColumns) =>
  crmFileColumns(rowsTable(kind, crmKeptColumns(input)), input);

/** The documented field list: rows table column → [Salesforce API name, HubSpot label, HubSpot internal name]. */
async function documentedFields(): Promise<Map<string, [string, string, string]>> {
  const doc = await readFile(join(repoRoot, 'docs/crm-round-trip.md'), 'utf8');
  const fields = new Map<string, [string, string, string]>();
  for (const match of doc.matchAll(
    /^\| `([a-z0-9_]+)` \| `([A-Za-z0-9_]+)` \([^)]*\) \| ([^|(]+?) \(`([a-z0-9_]+)`\) \|/gm,
  )) {
    fields.set(match[1] as string, [match[2] as string, match[3] as string, match[4] as string]);
  }
  return fields;
}

describe('rows.csv column names', () => {
  it("the documented Salesforce and HubSpot field lists (HubSpot's internal name: the API name lower-cased, no __c) are the columns the code writes, for every kind", async () => {
    const documented = await documentedFields();
    const written = new Set<string>();
    for (const kind of KINDS) {
      const { def } = fileOf(kind, { record_id: 'Id', kept: [] });
      for (const column of def.columns.slice(1)) {
        written.add(column.name);
        expect(documented.get(column.name), column.name).toEqual([
          crmColumnName(column.name, 'salesforce'),
          crmColumnName(column.name, 'labels'),
          crmFieldName('hubspot', column.name),
        ]);
        expect(crmFieldName('salesforce', column.name)).toBe(crmColumnName(column.name, 'salesforce'));
        const columns = [column.name];
        expect(columnOfField(crmFieldName('salesforce', column.name), columns)).toBe(column.name);
        expect(columnOfField(crmFieldName('hubspot', column.name), columns)).toBe(column.name);
      }
    }
    expect([...documented.keys()].sort()).toEqual([...written].sort());
  });

  it('every Salesforce name is a valid custom-field API name of at most 40 characters before __c', () => {
    for (const kind of KINDS) {
      for (const column of fileOf(kind, {}).def.columns) {
        const api = crmColumnName(column.name, 'salesforce');
        expect(api, column.name).toMatch(/^[A-Za-z][A-Za-z0-9]*(_[A-Za-z0-9]+)*__c$/);
        expect(api.length - 3, column.name).toBeLessThanOrEqual(40);
      }
    }
  });

  it("the export's id header names the id column and chooses the enrichment names; kept columns keep theirs", () => {
    expect(crmDialectOf('Id')).toBe('salesforce');
    expect(crmDialectOf('Account ID')).toBe('salesforce');
    expect(crmDialectOf('Record ID')).toBe('labels');
    expect(crmDialectOf('(Do Not Modify) Account')).toBe('labels');
    expect(crmDialectOf('crm_id')).toBe('plain');
    expect(crmDialectOf(undefined)).toBe('plain');
    const dynamics = fileOf('enrich', {
      record_id: '\uFEFF(Do Not Modify) Account',
      kept: ['(Do Not Modify) Row Checksum', '(Do Not Modify) Modified On', 'Status'],
    });
    expect(dynamics.header.slice(0, 6)).toEqual([
      '(Do Not Modify) Account',
      '(Do Not Modify) Row Checksum',
      '(Do Not Modify) Modified On',
      'Status',
      'Signal Row',
      'Signal Status',
    ]);
    const plain = fileOf('enrich', { kept: ['status'] });
    expect(plain.header.slice(0, 4)).toEqual(['record_id', 'input_status', 'row', 'status']);
    expect(new Set(plain.header.map((name) => name.toLowerCase())).size).toBe(plain.header.length);
  });
});
