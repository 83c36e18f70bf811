/**
 * Which column of an input plays which role (a company's domain, its LinkedIn page, its name, a person's email or
 * LinkedIn profile, the record's id), found the way a person names columns: the header spellings of the common CRM
 * exports below, matched ignoring case, spaces, underscores, hyphens and a UTF-8 byte-order mark.
 *
 * This module knows no jobs: the enrichment and verification jobs and `enrich-contacts` each ask for the roles they
 * use. It is decided once, from the header, when an input is prepared (and by the CLI before a job starts, so that a
 * file without a usable column is refused at once).
 */
import { CRM_UPDATE_COLUMNS, HEADER_SPELLINGS, type IdentifierRole, RECORD_ID_SPELLINGS } from '../crm/spellings.ts';
import { ColumnError } from '../errors.ts';

export type { IdentifierRole } from '../crm/spellings.ts';

/**
 * A header as compared: no byte-order mark, composed accents, one apostrophe, lower case, without spaces,
 * underscores, hyphens or dots.
 */
export function headerKey(name: string): string {
  return name
    .replace(/^\uFEFF/, '')
    .normalize('NFC')
    .replace(/[’‘`]/g, "'")
    .toLowerCase()
    .replace(/[\s_.-]+/g, '');
}

/**
 * A Salesforce custom field (`…__c`) whose name says LinkedIn: on an accounts export (`linkedin_url`) it is the
 * company's page unless its name says a person (`LinkedIn__c`, `LinkedIn_URL__c`, `Company_LinkedIn__c`); on a
 * contacts export (`linkedin_person`) it is the person's profile unless its name says a company.
 */
function customLinkedinColumn(header: readonly string[], role: 'linkedin_url' | 'linkedin_person'): string | undefined {
  return header.find((name) => {
    if (!/__c$/i.test(name) || !/linked[\s_-]*in/i.test(name)) return false;
    if (role === 'linkedin_url') return !/person|contact|profile|lead|personal|individual|bio/i.test(name);
    return !/company|account|page|organi[sz]ation|firm/i.test(name);
  });
}

/** The columns an input uses, by role, as its header spells them. */
export interface ColumnChoice {
  /** Identifier columns per role, in the order a row tries them (empty for a role not asked for or not found). */
  identifiers: Partial<Record<IdentifierRole, string[]>>;
  /** The record id column, when the input has one. */
  recordId?: string;
  /** Columns carried into the output as they are (`--keep-columns`). */
  kept: string[];
  /** Columns whose header names a website, domain, LinkedIn page or email that no role uses (absent when none). */
  unused?: UnusedColumn[];
}

/** A column the choice leaves out though its header names an identifier: the dry run warns about each. */
export interface UnusedColumn {
  column: string;
  /** What its header names: `a website`, `a domain`, `a LinkedIn URL`, `an email`. */
  names: string;
}

/** What a header says it holds, LinkedIn before website (a "LinkedIn URL" is no website). */
const HEADER_WORDS: readonly [RegExp, string][] = [
  [/linked[\s_-]*in/i, 'a LinkedIn URL'],
  [/e[\s_-]*mail/i, 'an email'],
  [/domain/i, 'a domain'],
  [/web[\s_-]*site|homepage|\burl\b|_url__c$/i, 'a website'],
];

export interface ColumnRequest {
  /** The roles the job can identify a row by, in the order a row tries them. */
  roles: IdentifierRole[];
  /** `--column`: the one identifier column; its role is the one its header spells, else the first of `roles`. */
  column?: string | undefined;
  /** `--id-column`. */
  idColumn?: string | undefined;
  /** `--keep-columns`. */
  keepColumns?: readonly string[] | undefined;
  /** The flag that names the identifier column, for messages (default `--column`). */
  columnFlag?: string;
}

/**
 * Chooses the columns of `header` for `request`, or throws `ColumnError` (saying which columns the file has and
 * which flag names one) when no identifier column is found or a named column is missing.
 */
export function chooseColumns(header: readonly string[], request: ColumnRequest): ColumnChoice {
  const byKey = new Map<string, string>();
  for (const name of header) if (!byKey.has(headerKey(name))) byKey.set(headerKey(name), name);
  const listed = header.map((name) => JSON.stringify(name.replace(/^\uFEFF/, ''))).join(', ');
  const named = (flag: string, wanted: string): string => {
    const found = byKey.get(headerKey(wanted));
    if (found === undefined) {
      throw new ColumnError(`${flag} "${wanted}": the input has no such column (its columns: ${listed})`, [...header]);
    }
    return found;
  };

  const identifiers: ColumnChoice['identifiers'] = {};
  if (request.column !== undefined) {
    const column = named(request.columnFlag ?? '--column', request.column);
    const role = request.roles.find((r) => spells(r, column)) ?? request.roles[0];
    if (role) identifiers[role] = [column];
  } else {
    const used = new Set<string>();
    for (const role of request.roles) {
      const columns: string[] = [];
      for (const { spelling } of HEADER_SPELLINGS[role]) {
        const found = byKey.get(headerKey(spelling));
        if (found !== undefined && !used.has(found) && !columns.includes(found)) columns.push(found);
      }
      if (role === 'linkedin_url' || role === 'linkedin_person') {
        const custom = customLinkedinColumn(header, role);
        if (custom !== undefined && !used.has(custom) && !columns.includes(custom)) columns.push(custom);
      }
      for (const column of columns) used.add(column);
      if (columns.length > 0) identifiers[role] = columns;
    }
  }
  const recordId =
    request.idColumn !== undefined
      ? named('--id-column', request.idColumn)
      : RECORD_ID_SPELLINGS.map(({ spelling }) => byKey.get(headerKey(spelling))).find((name) => name !== undefined);
  const kept = [
    ...CRM_UPDATE_COLUMNS.flatMap((name) => byKey.get(headerKey(name)) ?? []),
    ...(request.keepColumns ?? []).map((name) => named('--keep-columns', name)),
  ];

  if (Object.keys(identifiers).length === 0) {
    const roles = request.roles.map(describeRole).join(', ');
    throw new ColumnError(
      `no column of the input holds ${roles} (its columns: ${listed}); name the column with ${request.columnFlag ?? '--column'} <name>`,
      [...header],
    );
  }
  const unused = unusedColumns(header, [...Object.values(identifiers).flat(), ...kept, recordId ?? '']);
  return {
    identifiers,
    ...(recordId !== undefined ? { recordId } : {}),
    kept: [...new Set(kept)],
    ...(unused.length > 0 ? { unused } : {}),
  };
}

function unusedColumns(header: readonly string[], used: readonly string[]): UnusedColumn[] {
  const taken = new Set(used);
  return header.flatMap((column) => {
    if (taken.has(column)) return [];
    const names = HEADER_WORDS.find(([words]) => words.test(column))?.[1];
    return names === undefined ? [] : [{ column: column.replace(/^\uFEFF/, ''), names }];
  });
}

function spells(role: IdentifierRole, column: string): boolean {
  const key = headerKey(column);
  return HEADER_SPELLINGS[role].some(({ spelling }) => headerKey(spelling) === key);
}

const ROLE_WORDS: Record<IdentifierRole, string> = {
  domain: 'a domain or website',
  linkedin_url: 'a LinkedIn company URL',
  company_name: 'a company name',
  email: 'an email address',
  linkedin_person: 'a LinkedIn profile URL',
};

export const describeRole = (role: IdentifierRole): string => ROLE_WORDS[role];

/** The choice as the manifest and `--dry-run` show it: the columns used for each role. */
export function describeChoice(choice: ColumnChoice): Record<string, unknown> {
  return {
    ...Object.fromEntries(Object.entries(choice.identifiers).map(([role, columns]) => [role, columns.join(', ')])),
    ...(choice.recordId !== undefined ? { record_id: choice.recordId } : {}),
    kept: choice.kept,
    ...(choice.unused ? { unused: choice.unused } : {}),
  };
}
