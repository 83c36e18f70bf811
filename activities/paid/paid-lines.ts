import type { Store } from '../../connectors/storage/store.ts';
import { readPartLines, type StoredPart } from '../run/parts.ts';

/** The error code of the lines a batch gets when its retries are spent; those items were not answered. */
export const BATCH_FAILED = 'batch_failed';

/** What an unfinished part already holds: the lines that were paid for, their credits and their values. */
export interface PaidLines {
  lines: Record<string, unknown>[];
  credits: number;
  values: Set<string>;
}

/**
 * The paid-for lines of a `failed` or `partial` part, so that a retry sends only the items without one and never
 * pays for an answer twice. A `done` part or none holds nothing to keep here (a done part is reused whole).
 */
export async function readPaidLines(
  store: Store,
  key: string,
  part: StoredPart | undefined,
  field: 'domain' | 'email',
): Promise<PaidLines> {
  if (!part || (!part.failed && !part.partial)) return { lines: [], credits: 0, values: new Set() };
  const lines = (await readPartLines(store, key)).filter((line) => !isUnanswered(line));
  return { lines, credits: part.counts.credits, values: new Set(lines.map((line) => String(line[field]))) };
}

function isUnanswered(line: Record<string, unknown>): boolean {
  const error = line.error as { code?: unknown } | undefined;
  return line.status === 'error' && error?.code === BATCH_FAILED;
}
