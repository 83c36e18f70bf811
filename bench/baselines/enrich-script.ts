/**
 * The baseline of `enrich-throughput`: the script a user would write instead of signal-kit. Reads a CSV, sends its
 * domains 100 at a time to `POST /v1/companies/enrich/bulk` with N requests in flight through undici, and appends
 * one JSONL line per domain result to a file. A 429 or 5xx is retried after `Retry-After` (or a second); nothing is
 * durable, nothing is deduplicated beyond what the CSV holds.
 *
 *   node bench/baselines/enrich-script.ts --input domains.csv --output out.jsonl --url URL --key KEY \
 *     [--concurrency 8] [--column domain] [--report report.json]
 */
import { open, readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, request } from 'undici';
import { parseEnrichScriptArgs, writeScriptReport } from '../lib/script-io.ts';

const values = parseEnrichScriptArgs('enrich-script.ts');
const concurrency = values.concurrency;
const started = performance.now();

const [header, ...rows] = (await readFile(values.input, 'utf8')).split('\n').filter((line) => line.trim() !== '');
const column = (header ?? '').split(',').indexOf(values.column);
if (column < 0) throw new Error(`no column ${values.column}`);
const domains = rows.map((row) => row.split(',')[column]!.trim());
const batches: string[][] = [];
for (let i = 0; i < domains.length; i += 100) batches.push(domains.slice(i, i + 100));

const agent = new Agent({ connections: concurrency, keepAliveTimeout: 10_000 });
const out = await open(values.output, 'a');
let lines = 0;
let calls = 0;
let retries = 0;

async function enrich(batch: string[]): Promise<{ results: { domain: string }[] }> {
  for (let attempt = 1; ; attempt++) {
    calls += 1;
    const response = await request(`${values.url}/v1/companies/enrich/bulk`, {
      method: 'POST',
      dispatcher: agent,
      headers: { 'content-type': 'application/json', 'x-api-key': values.key },
      body: JSON.stringify({ domains: batch }),
    });
    if (response.statusCode === 200) return (await response.body.json()) as { results: { domain: string }[] };
    const text = await response.body.text();
    if ((response.statusCode === 429 || response.statusCode >= 500) && attempt < 8) {
      retries += 1;
      await sleep(Number(response.headers['retry-after'] ?? 1) * 1000);
      continue;
    }
    throw new Error(`HTTP ${response.statusCode}: ${text}`);
  }
}

let next = 0;
await Promise.all(
  Array.from({ length: concurrency }, async () => {
    while (next < batches.length) {
      const batch = batches[next++]!;
      const body = await enrich(batch);
      const text = body.results.map((result) => JSON.stringify(result)).join('\n') + '\n';
      await out.appendFile(text);
      lines += body.results.length;
    }
  }),
);
await out.close();
await agent.close();

const elapsedMs = performance.now() - started;
await writeScriptReport(values.report, {
  domains: domains.length,
  batches: batches.length,
  lines,
  calls,
  retries,
  elapsedMs,
});
