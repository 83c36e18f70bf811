/**
 * The Salesforce half of bench/crm-write-back.ts in its own process, so that its memory is the writer's alone (the
 * stand-in runs in the benchmark's process): reads the updates (JSON), writes them through the kit's Salesforce
 * writer and prints one JSON line: calls, outcomes, pauses, milliseconds, resident memory before the write and at its
 * peak. The credentials come from the `SALESFORCE_*` variables of its environment, as a worker's do (the JWT bearer
 * flow: its sign-in is made before the write and not counted).
 *
 *   node bench/lib/salesforce-write-child.ts --updates FILE [--object Account] [--bulk-threshold N]
 */
import { readFile } from 'node:fs/promises';
import { parseSalesforceAuth } from '../../config/salesforce.ts';
import { SalesforceWriter } from '../../connectors/crm/salesforce/writer.ts';
import type { CrmObject, CrmRecordUpdate } from '../../connectors/crm/writer.ts';
import { parseScriptFlags } from './script-io.ts';

const flags = parseScriptFlags('salesforce-write-child --updates FILE', ['updates'], {
  object: 'Account',
  'bulk-threshold': '2000',
});
const auth = parseSalesforceAuth();
if (!auth) throw new Error('salesforce-write-child: no SALESFORCE_* variables set');
const updates = JSON.parse(await readFile(flags.updates, 'utf8')) as CrmRecordUpdate[];
const writer = new SalesforceWriter(auth, { bulkThreshold: Number(flags['bulk-threshold']) });
const object = flags.object as CrmObject;
await writer.describe(object);
const callsBefore = writer.calls;
globalThis.gc?.();
const rssBeforeKb = Math.round(process.memoryUsage().rss / 1024);
const pauses: number[] = [];
const started = performance.now();
const outcomes = await writer.write({ object, updates, onPause: (pause) => pauses.push(pause.ms) });
const ms = performance.now() - started;
const count = (outcome: string) => outcomes.filter((o) => o.outcome === outcome).length;
console.log(
  JSON.stringify({
    calls: writer.calls - callsBefore,
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
