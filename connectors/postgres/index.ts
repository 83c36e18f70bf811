export { copyTextField, copyTextLine, NUL_STAND_IN, type NulCount } from './copy-text.ts';
export {
  type CopyInput,
  type CopySource,
  connectPostgres,
  type PostgresSession,
  type PostgresTransaction,
  redactUrl,
  type UpsertResult,
} from './session.ts';
export { createTableSql, type PgColumn, type PgTable, type PgType, quote, writableColumns } from './table.ts';
