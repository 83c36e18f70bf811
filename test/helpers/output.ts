import { gunzipSync } from 'node:zlib';
import type { Manifest } from '../../activities/jobs/types.ts';
import { openStore } from '../../config/storage.ts';

/** Reads a job's manifest and every manifested lines part back through the store, as a user's reader would. */
export async function readJobOutput(
  output: string,
  jobId: string,
): Promise<{ manifest: Manifest; lines: Record<string, unknown>[] }> {
  const store = openStore(output);
  const manifest = JSON.parse(await store.readText(`${jobId}/_manifest.json`)) as Manifest;
  const lines: Record<string, unknown>[] = [];
  for (const part of manifest.parts) {
    if (part.table !== undefined && part.table !== 'lines') continue; // a flat table: test/helpers/tables.ts
    const chunks: Buffer[] = [];
    for await (const chunk of await store.openRead(part.key)) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks);
    const text = part.key.endsWith('.gz') ? gunzipSync(raw).toString('utf8') : raw.toString('utf8');
    for (const line of text.split('\n')) if (line) lines.push(JSON.parse(line) as Record<string, unknown>);
  }
  return { manifest, lines };
}
