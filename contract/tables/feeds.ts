import { type Column, type ColumnType, col, type TableDef, type TableRow, text } from './columns.ts';
import { calendarDate, epochMillis, integerOrNull, numberOrNull, stringListOrNull, stringOrNull } from './values.ts';

/**
 * The tables of a scheduled feed's run: `companies` (company search) and `contacts` (contact search, buyer intent),
 * one row per delivered company or person, keyed by the feed's `key` (the line's). The item fields the spec and the
 * sandbox's documentation name are typed columns; everything else of the item (fields without a column, or a value of
 * another type than its column's) stays in `extra`, one JSON object, so an answer that drifts never changes the schema.
 */

/** A typed column filled from the item's field at `path` (`contact.email`: the `email` of the item's `contact`). */
interface Field {
  path: string;
  column: Column;
}

const field = (path: string, column: Column): Field => ({ path, column });

const KEY = {
  ...col('key', 'string', "the feed's key of the record (the line's key): what the feed remembers it delivered", false),
  text: true,
} as const satisfies Column;

const EXTRA = col(
  'extra',
  'json',
  'the rest of the item (fields without a column, or of another type than the column): a JSON object',
);

/** Search answers: how many signals matched and the newest one (spec 2.6; contact search as the sandbox answers). */
const MATCHED: Field[] = [
  field('signal_count', col('signal_count', 'int', 'signals of the record that matched the search')),
  field('latest_signal_at', col('latest_signal_at', 'timestamp', 'when the newest matching signal was detected (UTC)')),
  field('latest_signal_id', text('latest_signal_id', 'the id of the newest matching signal (signals table key)')),
];

const COMPANY_FIELDS: Field[] = [
  field('domain', col('domain', 'string', "the company's domain")),
  field('name', col('name', 'string', "the company's name")),
  ...MATCHED,
  field('industries', col('industries', 'string_list', "the company's industries")),
];

/** A person (spec 2.5 and 2.7), their employer, and for buyer intent the topic they show intent on. */
const CONTACT_FIELDS: Field[] = [
  field('topic_id', col('topic_id', 'string', 'intent-contacts: the topic (b2b_<number>) the person shows intent on')),
  field('intent_score', col('intent_score', 'double', 'intent-contacts: how strong the intent is')),
  ...(
    [
      ['first_name', "the person's first name"],
      ['last_name', "the person's last name"],
      ['full_name', "the person's full name"],
      ['email', "the person's email address"],
      ['email_validation_status', 'intent-contacts: e.g. Valid (Esp); null when not validated'],
      ['job_title', "the person's job title"],
      ['linkedin_url', "the person's LinkedIn profile URL"],
      ['mobile_phone', 'intent-contacts: mobile phone, where available'],
      ['seniority', 'e.g. Vp, Director'],
      ['department', "the person's department"],
      ['city', "the person's city"],
      ['state', "the person's state or region"],
      ['country', "the person's country"],
    ] as const
  ).map(([name, description]) => field(`contact.${name}`, col(name, 'string', description))),
  ...(
    [
      ['name', "the employer's name"],
      ['domain', "the employer's domain"],
      ['linkedin_url', "the employer's LinkedIn URL"],
      ['industry', "the employer's industry (intent-contacts)"],
    ] as const
  ).map(([name, description]) => field(`company.${name}`, col(`company_${name}`, 'string', description))),
  ...MATCHED,
];

export type FeedTableName = 'companies' | 'contacts';

const FIELDS: Record<FeedTableName, Field[]> = { companies: COMPANY_FIELDS, contacts: CONTACT_FIELDS };

export const FEED_TABLES: Record<FeedTableName, TableDef> = {
  companies: { table: 'companies', columns: [KEY, ...COMPANY_FIELDS.map((f) => f.column), EXTRA] },
  contacts: { table: 'contacts', columns: [KEY, ...CONTACT_FIELDS.map((f) => f.column), EXTRA] },
};

/** A value as its column holds it (see `TableRow`), or null when it has another type. */
const TYPED: Record<ColumnType, (value: unknown) => unknown> = {
  string: stringOrNull,
  int: integerOrNull,
  double: numberOrNull,
  timestamp: epochMillis,
  date: calendarDate,
  string_list: stringListOrNull,
  json: (value) => value ?? null,
};

/**
 * The table row of one delivered item. Nothing of the item is lost: each field goes to its column when it has the
 * column's type (a null too: the column is null when the item has no value), else it stays in `extra` where it was
 * (a nested object keeps only its fields without a column).
 */
export function feedRow(table: FeedTableName, key: string, item: Record<string, unknown>): TableRow {
  const row: TableRow = { key };
  const extra = structuredClone(item);
  delete extra['key'];
  for (const { path, column } of FIELDS[table]) {
    row[column.name] = null;
    const [outer, inner] = path.split('.') as [string, string | undefined];
    const holder = inner === undefined ? extra : extra[outer];
    if (!isObject(holder)) continue;
    const name = inner ?? outer;
    if (!(name in holder)) continue;
    const value = holder[name];
    const typed = TYPED[column.type](value);
    if (typed === null && value !== null) continue;
    row[column.name] = typed;
    delete holder[name];
    if (inner !== undefined && Object.keys(holder).length === 0) delete extra[outer];
  }
  row[EXTRA.name] = extra;
  return row;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
