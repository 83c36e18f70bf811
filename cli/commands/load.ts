import type { OptionValues } from 'commander';
import { DatabaseError, KitError } from '../../connectors/errors.ts';
import { sslModeOf } from '../../connectors/postgres/connection.ts';
import { resolveService, serviceNameOf } from '../../connectors/postgres/service-file.ts';
import { duckdbPath } from '../../loader/duckdb.ts';
import { loadManifest } from '../../loader/load.ts';
import { PREFIX } from '../../loader/tables.ts';
import { locationUrl, UsageError } from '../args.ts';

/**
 * `--into`: a postgres:// (or postgresql://) URL naming a host or a connection service, whose service is defined and
 * whose sslmode is libpq's, or a duckdb:///absolute/path/file.duckdb; anything else is a usage mistake (exit 2).
 */
export function databaseUrl(value: string | undefined): string {
  if (value === undefined || value === '') {
    throw new UsageError('--into is required (a postgres:// URL or duckdb:///abs/path/warehouse.duckdb)');
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError('--into must be a postgres://user@host[:port]/database URL, got something unparsable');
  }
  if (url.protocol === 'duckdb:') {
    try {
      duckdbPath(value);
    } catch (error) {
      throw new UsageError((error as Error).message);
    }
    return value;
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
    throw new UsageError(
      `--into must be a postgres:// or postgresql:// URL, or duckdb:///abs/path/file.duckdb, got a ${url.protocol}// one`,
    );
  }
  // A connection service (service=NAME or PGSERVICE) may name the host instead.
  if (!url.hostname && serviceNameOf(value) === undefined) {
    throw new UsageError('--into must name a host (postgres://user@host[:port]/database) or a service (?service=NAME)');
  }
  try {
    sslModeOf(resolveService(value).url);
  } catch (error) {
    throw new UsageError(`--into: ${(error as Error).message}`);
  }
  return value;
}

export function tablePrefix(value: string | undefined): string {
  const prefix = value ?? 'signal_kit_';
  if (!PREFIX.test(prefix)) {
    throw new UsageError(
      `--table-prefix must be lower-case letters, digits and _ (not first a digit), at most 40, got "${prefix}"`,
    );
  }
  return prefix;
}

/** Loads the manifest's tables and prints what each table gained; exit 0, 1 on failure, 2 on bad flags. */
export async function runLoadCommand(flags: OptionValues): Promise<number> {
  const options = {
    manifestUrl: locationUrl('manifest', flags['manifest'] as string | undefined),
    into: databaseUrl(flags['into'] as string | undefined),
    prefix: tablePrefix(flags['tablePrefix'] as string | undefined),
  };
  try {
    const report = await loadManifest(options);
    console.log(JSON.stringify(report, null, 2));
    return 0;
  } catch (error) {
    if (!(error instanceof KitError)) throw error;
    const retry =
      error instanceof DatabaseError && error.retryable ? ' (the database may be back later: try again)' : '';
    console.error(`signal-kit load: ${error.name}: ${error.message}${retry}`);
    return 1;
  }
}
