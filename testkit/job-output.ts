import { createHash } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import type { Manifest } from '../activities/jobs/types.ts';
import { openStore } from '../config/storage.ts';
import type { Store } from '../connectors/storage/store.ts';

export type Line = Record<string, unknown>;

export interface CheckedOutput {
  manifest: Manifest;
  lines: Line[];
  /** Every line as JSON, sorted: two runs of the same input compare equal. */
  lineSet: string[];
}

async function readAllBytes(store: Store, key: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of await store.openRead(key)) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/**
 * Reads a job's manifest and every manifested part back through the store and checks that each part's bytes, sha256
 * and line count are what the manifest says (no part published incomplete); throws a message saying what is wrong.
 */
export async function readCheckedParts(
  output: string,
  jobId: string,
): Promise<{ manifest: Manifest; lines: Line[]; problems: string[] }> {
  const store = openStore(output);
  const manifest = JSON.parse(await store.readText(`${jobId}/_manifest.json`)) as Manifest;
  const problems: string[] = [];
  const lines: Line[] = [];
  for (const part of manifest.parts) {
    if (part.table !== undefined && part.table !== 'lines') continue; // a flat table (docs/tables.md)
    const raw = await readAllBytes(store, part.key);
    const sha256 = createHash('sha256').update(raw).digest('hex');
    if (raw.length !== part.bytes) problems.push(`${part.key}: ${raw.length} bytes, manifest says ${part.bytes}`);
    if (sha256 !== part.sha256) problems.push(`${part.key}: sha256 ${sha256}, manifest says ${part.sha256}`);
    const text = part.key.endsWith('.gz') ? gunzipSync(raw).toString('utf8') : raw.toString('utf8');
    if (text !== '' && !text.endsWith('\n')) problems.push(`${part.key}: no final newline`);
    const partLines = text.split('\n').filter((line) => line !== '');
    if (partLines.length !== part.lines)
      problems.push(`${part.key}: ${partLines.length} lines, manifest says ${part.lines}`);
    for (const [i, line] of partLines.entries()) {
      try {
        lines.push(JSON.parse(line) as Line);
      } catch {
        problems.push(`${part.key}: line ${i + 1} is not JSON`);
      }
    }
  }
  if (problems.length) throw new Error(`job ${jobId} output at ${output}:\n  ${problems.join('\n  ')}`);
  return { manifest, lines, problems };
}

/**
 * readCheckedParts, then the accounting: one answering line per distinct valid input, none missing, none twice; one
 * `invalid` line per bad row; a repeated input's `duplicate` line points to a line; the manifest's counts add up.
 */
export async function checkJobOutput(
  output: string,
  jobId: string,
  expected: { distinct: Set<string>; invalidRows: number[]; field?: string },
): Promise<CheckedOutput> {
  const { manifest, lines, problems } = await readCheckedParts(output, jobId);
  const field = expected.field ?? 'domain';
  const seen = new Map<string, number>();
  const invalidRows: number[] = [];
  const rows = new Set(lines.map((line) => Number(line['row'])));
  let duplicates = 0;
  for (const line of lines) {
    if (line['status'] === 'invalid') {
      invalidRows.push(Number(line['row']));
      continue;
    }
    if (line['status'] === 'duplicate') {
      // A repeated input: its line points to the line that answers it, and is not an answer of its own.
      duplicates += 1;
      if (!rows.has(Number(line['duplicate_of']))) problems.push(`row ${line['row']} points to a row with no line`);
      continue;
    }
    const value = String(line[field]);
    seen.set(value, (seen.get(value) ?? 0) + 1);
  }
  const twice = [...seen].filter(([, n]) => n > 1).map(([v, n]) => `${v} ×${n}`);
  const extra = [...seen.keys()].filter((v) => !expected.distinct.has(v));
  const missing = [...expected.distinct].filter((v) => !seen.has(v));
  if (twice.length) problems.push(`${twice.length} inputs written more than once: ${twice.slice(0, 5).join(', ')}`);
  if (extra.length) problems.push(`${extra.length} lines for no input: ${extra.slice(0, 5).join(', ')}`);
  if (missing.length) problems.push(`${missing.length} inputs with no line: ${missing.slice(0, 5).join(', ')}`);
  const sortedRows = (rows: number[]) => [...rows].sort((a, b) => a - b).join(',');
  if (sortedRows(invalidRows) !== sortedRows(expected.invalidRows)) {
    problems.push(`invalid rows ${sortedRows(invalidRows)}, expected ${sortedRows(expected.invalidRows)}`);
  }
  const counted =
    manifest.counts.ok + manifest.counts.not_found + manifest.counts.error + manifest.counts.invalid + duplicates;
  if (counted !== lines.length || manifest.counts.lines !== lines.length) {
    problems.push(`manifest counts ${JSON.stringify(manifest.counts)} do not add up to ${lines.length} lines`);
  }
  if (problems.length) throw new Error(`job ${jobId} output at ${output}:\n  ${problems.join('\n  ')}`);
  return { manifest, lines, lineSet: lines.map((line) => JSON.stringify(line)).sort() };
}

/** Batch index of every distinct value, from the job's own batch files (`<output>/<jobId>/work/batch-N.jsonl`). */
export async function batchIndex(output: string, jobId: string): Promise<Map<string, number>> {
  const store = openStore(output);
  const index = new Map<string, number>();
  for await (const info of store.list(`${jobId}/work/`)) {
    const match = /batch-(\d+)\.jsonl$/.exec(info.key);
    if (!match) continue;
    const text = await store.readText(info.key);
    for (const line of text.split('\n')) {
      if (line) index.set((JSON.parse(line) as { v: string }).v, Number(match[1]));
    }
  }
  return index;
}
