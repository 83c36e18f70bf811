import { Context } from '@temporalio/activity';
import type { Store } from '../../connectors/storage/store.ts';
import { readPart, readPartLines, redoneIdentity, zeroCounts } from '../run/parts.ts';
import { type BatchItem, matchedByOf, recordFields } from './batch-file.ts';
import type { SharedAnswer } from './fold.ts';
import { type BatchSeries, duplicatePartKey, duplicatesPrefix, seriesPartKey } from './layout.ts';
import { linesPartIdentity } from './part-identity.ts';
import { writeJobPart } from './tables.ts';
import type { JobRef, PartCounts } from './types.ts';

/**
 * The line of a row whose identifier another row already holds: it points at the answering line (`duplicate_of`)
 * and carries the answer's headline (its status, company and signal summary for enrichment; its result for an
 * address), never its signals. Nothing is paid for it. `answer` is absent while the answering line has none (its
 * batch did not run: the credit budget stopped the job first).
 */
export function duplicateLine(
  item: BatchItem & { first?: number },
  field: 'domain' | 'email',
  answer: SharedAnswer | undefined,
  firstRow = item.first ?? answer?.row ?? item.row,
): Record<string, unknown> & { status: 'duplicate' } {
  const head = {
    [field]: field === 'domain' ? (answer?.domain ?? (item.m ? null : item.v)) : item.v,
    status: 'duplicate' as const,
    row: item.row,
    ...recordFields(item),
    ...(field === 'domain' ? { matched_by: matchedByOf(item) } : {}),
    input: item.raw,
    duplicate_of: answer?.row ?? firstRow,
  };
  if (!answer) return head;
  const { row: _row, status, domain: _domain, ...shared } = answer;
  const kept = Object.fromEntries(Object.entries(shared).filter(([, value]) => value !== undefined));
  return { ...head, answer_status: status, ...kept };
}

/** What a duplicate shares of its answering line. */
function sharedOf(line: Record<string, unknown>, field: 'domain' | 'email'): SharedAnswer {
  // A line that is itself a duplicate (a domain first answered by a single call) hands on the answer it points to.
  if (line['status'] === 'duplicate') {
    return {
      row: Number(line['duplicate_of']),
      status: String(line['answer_status'] ?? 'duplicate'),
      ...(field === 'domain' ? { domain: (line['domain'] as string | null) ?? null } : {}),
      ...(line['contact'] !== undefined ? { contact: line['contact'] } : {}),
      ...(line['company'] !== undefined ? { company: line['company'] } : {}),
      ...(line['signal_summary'] !== undefined ? { signal_summary: line['signal_summary'] } : {}),
      ...(line['result'] !== undefined ? { result: line['result'] } : {}),
    };
  }
  if (field === 'email') {
    return {
      row: Number(line['row']),
      status: String(line['status']),
      ...(line['status'] === 'ok' ? { result: line['result'] } : {}),
    };
  }
  return {
    row: Number(line['row']),
    status: String(line['status']),
    domain: (line['domain'] as string | null | undefined) ?? null,
    ...(line['contact'] !== undefined ? { contact: line['contact'] } : {}),
    ...(line['company'] !== undefined ? { company: line['company'] } : {}),
    ...(line['signal_summary'] !== undefined ? { signal_summary: line['signal_summary'] } : {}),
  };
}

/**
 * The job's last step before its manifest: every duplicate row gets its line, answered from the part that holds its
 * first row (`parts/dup-N` for bulk batch N, `parts/single-dup-N` for single batch N). No API call. A duplicate part
 * is rewritten while its answering part is unfinished (a budget stop), so a re-run that finishes the job fills it in.
 */
export async function answerDuplicates(store: Store, request: { job: JobRef }): Promise<{ parts: number }> {
  const { job } = request;
  const field = job.kind === 'verify-emails' ? 'email' : 'domain';
  const files: string[] = [];
  for await (const info of store.list(duplicatesPrefix(job))) files.push(info.key);
  let parts = 0;
  for (const key of files.sort()) {
    Context.current().heartbeat(key);
    const match = /dups-(bulk|single)-(\d+)\.jsonl$/.exec(key);
    if (!match) continue;
    const series = match[1] as BatchSeries;
    const index = Number(match[2]);
    const outKey = duplicatePartKey(job, series, index);
    const identity = linesPartIdentity(job, outKey);
    const found = await readPart(store, outKey, identity);
    const existing = found.part;
    if (existing && !existing.partial) continue;
    const answeringKey = seriesPartKey(job, series, index);
    const answering = (await readPart(store, answeringKey, linesPartIdentity(job, answeringKey))).part;
    const answers = new Map<number, Record<string, unknown>>();
    if (answering) {
      for (const line of await readPartLines(store, seriesPartKey(job, series, index))) {
        answers.set(Number(line['row']), line);
      }
    }
    const items = (await store.readText(key))
      .split('\n')
      .filter((text) => text !== '')
      .map((text) => JSON.parse(text) as BatchItem & { first: number });
    let unanswered = false;
    const counts: PartCounts = { ...zeroCounts(), credits: 0, calls: 0, duplicate: 0 };
    const lines = items.map((item) => {
      const first = answers.get(item.first);
      const answered = first && !isUnfinished(first);
      if (!answered) unanswered = true;
      counts.lines += 1;
      counts.duplicate = (counts.duplicate ?? 0) + 1;
      return duplicateLine(item, field, answered ? sharedOf(first, field) : undefined);
    });
    const status = unanswered ? 'partial' : 'done';
    await writeJobPart(
      store,
      job,
      outKey,
      lines,
      counts,
      status,
      [],
      redoneIdentity(linesPartIdentity(job, outKey), found),
    );
    parts += 1;
  }
  return { parts };
}

/** A line whose row is not answered yet (its batch failed, or the budget stopped it), so a re-run may still answer. */
function isUnfinished(line: Record<string, unknown>): boolean {
  const code = (line['error'] as { code?: string } | undefined)?.code;
  return (
    line['status'] === 'error' &&
    (code === 'batch_failed' || code === 'budget_exhausted' || code === 'upstream_failure')
  );
}
