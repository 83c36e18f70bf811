import type { CatalogAnswer, CatalogRequest, CatalogSignalType, CatalogTopic } from '../../activities/catalog.ts';
import { parseTemporalConfig, type TemporalConfig } from '../../config/worker.ts';
import { FAILURE_TYPE, NoWorkerError, SignalApiError, ValidationError } from '../../connectors/errors.ts';
import { lookupCatalog } from '../../workflows/catalog-lookup.ts';
import { positiveInt, UsageError } from '../args.ts';
import { connectClient } from '../temporal.ts';
import { apiErrorOf } from '../webhook-service.ts';
import { runThroughWorker } from '../worker-call.ts';

// `signal-kit topics search TEXT` and `signal-kit signal-types`: the service's free catalogs, looked up by a worker
// (with its key, on the rate-limited queue) and printed as a table, or as JSON with --json.

/** The most topics one page of the catalog holds (the sandbox's documented bound). */
const MAX_TOPICS = 1000;

export interface TopicsFlags {
  limit?: string;
  cursor?: string;
  json?: boolean;
}

export interface SignalTypesFlags {
  json?: boolean;
}

/** `topics search`'s operand and flags as the request to send; every mistake a `UsageError`. */
export function topicsRequest(text: string | undefined, flags: TopicsFlags): CatalogRequest {
  const q = (text ?? '').trim();
  if (q === '') throw new UsageError('usage: signal-kit topics search TEXT (a word of the topic name, or b2b_<n>)');
  const limit = positiveInt('limit', flags.limit) ?? 50;
  if (limit > MAX_TOPICS) throw new UsageError(`--limit must be at most ${MAX_TOPICS}, got "${flags.limit}"`);
  return { what: 'topics', q, limit, ...(flags.cursor ? { cursor: flags.cursor } : {}) };
}

/** Rows as a plain text table: a header, a rule, and columns padded to their widest cell. */
export function formatTable(header: string[], rows: string[][]): string {
  const widths = header.map((title, i) => Math.max(title.length, ...rows.map((row) => (row[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

export function topicsTable(topics: CatalogTopic[], nextCursor: string | null): string {
  if (topics.length === 0) return 'no topic matches';
  const table = formatTable(
    ['TOPIC ID', 'CATEGORY', 'NAME'],
    topics.map((t) => [t.topic_id, t.category ?? '', t.name]),
  );
  const more = nextCursor ? `\nmore topics match: add --cursor ${nextCursor}` : '';
  return `${table}\n${topics.length} topic${topics.length === 1 ? '' : 's'}${more}`;
}

export function signalTypesTable(types: CatalogSignalType[]): string {
  const table = formatTable(
    ['SIGNAL TYPE', 'CATEGORY', 'SIGNALS', 'SUBTYPES'],
    types.map((t) => [
      t.signal_type,
      t.category ?? '',
      t.signal_count === undefined ? '' : String(t.signal_count),
      t.subtypes.length > 6 ? `${t.subtypes.slice(0, 6).join(', ')}, … (${t.subtypes.length})` : t.subtypes.join(', '),
    ]),
  );
  return `${table}\n${types.length} signal types (--json lists every subtype)`;
}

export interface CatalogCommandDeps {
  /** Makes the call (tests); otherwise a worker makes it on the API queue. */
  call?: (request: CatalogRequest) => Promise<CatalogAnswer>;
  temporal?: TemporalConfig;
  print?: (text: string) => void;
  printError?: (text: string) => void;
}

/** One catalog look-up through a worker, as `lookupCatalog`'s workflow. */
export async function lookupThroughWorker(
  request: CatalogRequest,
  temporal: TemporalConfig = parseTemporalConfig(),
): Promise<CatalogAnswer> {
  const client = await connectClient(temporal);
  try {
    return await runThroughWorker(client, temporal, lookupCatalog, `catalog-${request.what}`, {
      request,
      apiTaskQueue: temporal.apiTaskQueue,
    });
  } catch (error) {
    throw apiErrorOf(error, FAILURE_TYPE.catalogApi) ?? error;
  } finally {
    await client.connection.close();
  }
}

/** `signal-kit topics search TEXT` or `signal-kit signal-types`: exits 0, 1 (no worker, a failed call) or 2. */
export async function runCatalogCommand(
  command: 'topics search' | 'signal-types',
  request: () => CatalogRequest,
  json: boolean,
  deps: CatalogCommandDeps = {},
): Promise<number> {
  const print = deps.print ?? ((text: string) => console.log(text));
  const printError = deps.printError ?? ((text: string) => console.error(text));
  const call = deps.call ?? ((r: CatalogRequest) => lookupThroughWorker(r, deps.temporal));
  const checked = request();
  try {
    const answer = await call(checked);
    if (json) print(JSON.stringify(answer, null, 2));
    else if (answer.what === 'topics') print(topicsTable(answer.topics, answer.next_cursor));
    else print(signalTypesTable(answer.types));
    return 0;
  } catch (error) {
    if (error instanceof NoWorkerError) {
      printError(`signal-kit ${command}: ${error.message}`);
      return 1;
    }
    if (!(error instanceof SignalApiError)) throw error;
    const where = error.field ? `${error.field === 'q' ? 'TEXT' : error.field}: ` : '';
    printError(`signal-kit ${command}: ${where}${error.message}`);
    return error instanceof ValidationError ? 2 : 1;
  }
}
