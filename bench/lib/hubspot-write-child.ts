/**
 * The HubSpot half of bench/crm-write-back.ts in its own process, so that its memory is the writer's alone (the
 * stand-in runs in the benchmark's process): reads the updates (JSON), writes them through the kit's HubSpot writer
 * and prints one JSON line: calls, outcomes, pauses, milliseconds, resident memory before the write and at its peak.
 * The token comes from `HUBSPOT_ACCESS_TOKEN` in its environment, as a worker's does.
 *
 *   node bench/lib/hubspot-write-child.ts --url URL --updates FILE --object companies
 */
import { readFile } from 'node:fs/promises';
import { parseHubspotConfig } from '../../config/crm.ts';
import { createHubspotWriter } from '../../connectors/crm/hubspot/index.ts';
import type { CrmObject, CrmRecordUpdate } from '../../connectors/crm/writer.ts';
import { parseScriptFlags } from './script-io.ts';

const flags = parseScriptFlags('hubspot-write-child --url URL --updates FILE', ['url', 'updates'], {
  object: 'companies',
});
const config = parseHubspotConfig({ ...process.env, HUBSPOT_API_URL: flags.url });
const updates = JSON.parse(await readFile(flags.updates, 'utf8')) as CrmRecordUpdate[];
const writer = createHubspotWriter(config);
globalThis.gc?.();
const rssBeforeKb = Math.round(process.memoryUsage().rss / 1024);
const pauses: number[] = [];
const started = performance.now();
const outcomes = await writer.write({
  object: flags.object as CrmObject,
  updates,
  onPause: (pause) => pauses.push(pause.ms),
});
const ms = performance.now() - started;
const count = (outcome: string) => outcomes.filter((o) => o.outcome === outcome).length;
console.log(
  JSON.stringify({
    calls: writer.calls,
    written: count('written'),
    rejected: count('rejected'),
    notAttempted: count('not_attempted'),
    pauses: pauses.length,
    pausedMs: pauses.reduce((a, b) => a + b, 0),
    ms,
    rssBeforeKb,
    maxRssKb: process.resourceUsage().maxRSS,
  }),
);
