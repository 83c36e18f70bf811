import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { UsageError } from '../connectors/errors.ts';
import { MAX_SIGNAL_SUBTYPES, MAX_SIGNALS_PER_CALL } from '../connectors/signal-api/limits.ts';

export { UsageError } from '../connectors/errors.ts';

export function list(value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  const items = value
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
  return items.length ? items : undefined;
}

export function positiveInt(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const number = Number(value);
  if (!Number.isInteger(number) || number <= 0)
    throw new UsageError(`--${flag} must be a positive integer, got "${value}"`);
  return number;
}

/** The signal filters `enrich` and `schedule create` share (`--limit`, `--signal-types`, `--signal-subtypes`), checked. */
export function signalFilters(flags: {
  limit?: string | undefined;
  signalTypes?: string | undefined;
  signalSubtypes?: string | undefined;
}) {
  const limit = positiveInt('limit', flags.limit);
  if (limit !== undefined && limit > MAX_SIGNALS_PER_CALL)
    throw new UsageError(`--limit must be at most ${MAX_SIGNALS_PER_CALL} (signals per domain)`);
  const subtypes = list(flags.signalSubtypes);
  if (subtypes && subtypes.length > MAX_SIGNAL_SUBTYPES)
    throw new UsageError(`--signal-subtypes takes at most ${MAX_SIGNAL_SUBTYPES} subtypes`);
  return { limit, types: list(flags.signalTypes), subtypes };
}

export function isoDate(flag: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const time = Date.parse(value);
  if (Number.isNaN(time)) throw new UsageError(`--${flag} must be an ISO 8601 date, got "${value}"`);
  return new Date(time).toISOString();
}

export function required(flag: string, value: string | undefined): string {
  if (value === undefined || value === '') throw new UsageError(`--${flag} is required`);
  return value;
}

/** Plain paths become absolute file:// URLs, so that a worker in another directory finds the same place. */
export function locationUrl(flag: string, value: string | undefined): string {
  const raw = required(flag, value);
  if (/^(file|s3|gs):\/\//.test(raw)) return raw;
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(raw)) {
    throw new UsageError(`--${flag} must be a path or a file://, s3:// or gs:// URL, got "${raw}"`);
  }
  return pathToFileURL(resolve(raw)).href;
}
