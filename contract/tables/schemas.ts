/**
 * The flat tables as zod schemas of one row in its JSONL form (a CSV row holds the same cells as text; a Parquet row
 * the same values in the types `columns.ts` names). The JSON Schemas in `schemas/table-*.schema.json` are generated
 * from these (`npm run schemas`).
 */
import { z } from 'zod';
import type { Column, TableDef } from './columns.ts';
import { FEED_TABLES } from './feeds.ts';
import { invalidTable, rowsTable } from './rows.ts';
import { SIGNALS_TABLE } from './signals.ts';

const PARQUET_TYPE: Record<Column['type'], string> = {
  string: 'BYTE_ARRAY (STRING)',
  json: 'BYTE_ARRAY (JSON)',
  int: 'INT32',
  double: 'DOUBLE',
  timestamp: 'INT64 TIMESTAMP(MILLIS, UTC)',
  date: 'INT32 DATE',
  string_list: 'LIST<STRING>',
};

function columnSchema(column: Column): z.ZodType {
  const base = {
    string: z.string(),
    json: z.string().describe('JSON text'),
    int: z.int(),
    double: z.number(),
    timestamp: z.iso.datetime(),
    date: z.iso.date(),
    string_list: z.array(z.string()),
  }[column.type];
  const typed = column.nullable ? base.nullable() : base;
  return typed.meta({ description: `${column.description} [Parquet: ${PARQUET_TYPE[column.type]}]` });
}

function tableSchema(def: TableDef, title: string, description: string, kept: boolean) {
  const shape = Object.fromEntries(def.columns.map((column) => [column.name, columnSchema(column)]));
  const object = z.object(shape);
  const withKept = kept
    ? object.catchall(z.string().nullable().describe('a kept input column (--keep-columns), under its own name'))
    : object.strict();
  return withKept.meta({ title, description });
}

export const TABLE_SCHEMAS = {
  'table-enrich-rows.schema.json': tableSchema(
    rowsTable('enrich'),
    'signal-kit enrich rows table',
    '<job>/tables/rows/part-NNNNN.{jsonl.gz,csv,parquet}: one row per answered input row (the CRM file).',
    true,
  ),
  'table-enrich-contacts-rows.schema.json': tableSchema(
    rowsTable('enrich-contacts'),
    'signal-kit enrich-contacts rows table',
    '<job>/tables/rows/part-NNNNN.{jsonl.gz,csv,parquet}: one row per answered contact row: the person, their employer and their person-level signal counts.',
    true,
  ),
  'table-verify-emails-rows.schema.json': tableSchema(
    rowsTable('verify-emails'),
    'signal-kit verify-emails rows table',
    '<job>/tables/rows/part-NNNNN.{jsonl.gz,csv,parquet}: one row per verified input row.',
    true,
  ),
  'table-signals.schema.json': tableSchema(
    SIGNALS_TABLE,
    'signal-kit signals table',
    'tables/signals/part-NNNNN.{jsonl.gz,csv,parquet}: one row per signal, keyed by signal_id (enrich, scheduled push, webhook collector).',
    false,
  ),
  'table-invalid.schema.json': tableSchema(
    invalidTable(),
    'signal-kit invalid table',
    '<job>/tables/invalid/part-NNNNN.{jsonl.gz,csv,parquet}: one row per input row without a usable value.',
    true,
  ),
  'table-feed-companies.schema.json': tableSchema(
    FEED_TABLES.companies,
    'signal-kit scheduled-feed companies table',
    '<name>/companies/dt=<date>/run-<id>/tables/companies/part-NNNNN.{jsonl.gz,csv,parquet}: one row per company a company-search feed run delivered, keyed by key.',
    false,
  ),
  'table-feed-contacts.schema.json': tableSchema(
    FEED_TABLES.contacts,
    'signal-kit scheduled-feed contacts table',
    '<name>/contacts/dt=<date>/run-<id>/tables/contacts/part-NNNNN.{jsonl.gz,csv,parquet}: one row per person (per topic, buyer intent) a contact-search or intent-contacts feed run delivered, keyed by key.',
    false,
  ),
} as const;
