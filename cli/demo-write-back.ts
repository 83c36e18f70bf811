/**
 * The demo's last step: one night of the nightly CRM sync on a local HubSpot's export (the HubSpot stand-in, seeded
 * with the demo's first accounts), written back to that HubSpot by record id, and what changed there, read back
 * through the official client (`@hubspot/api-client`) before and after the night.
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Client as HubspotClient } from '@hubspot/api-client';
import type { Client } from '@temporalio/client';
import { parse } from 'csv-parse/sync';
import type { SyncResult, WriteBackSummary } from '../activities/sync/types.ts';
import { kitFields } from '../activities/writeback/fields.ts';
import type { WorkerConfig } from '../config/worker.ts';
import type { CrmSyncInput } from '../workflows/crm-sync.ts';
import type { LocalCrms } from './local-crms.ts';

/** The demo's accounts the night covers: enough to show a write-back, few enough to keep the demo quick. */
export const DEMO_NIGHT_ACCOUNTS = 40;

/** The records whose values the demo shows before and after. */
const SHOWN = 3;

type Values = Map<string, Record<string, string | null>>;

/** The kit's fields of `ids` as HubSpot answers them, through the official client. */
async function readCompanies(crms: LocalCrms, ids: string[], fields: string[]): Promise<Values> {
  const hubspot = new HubspotClient({ accessToken: crms.hubspot.token, basePath: crms.hubspot.url });
  const answer = await hubspot.crm.companies.batchApi.read({
    inputs: ids.map((id) => ({ id })),
    properties: ['name', ...fields],
    propertiesWithHistory: [],
  });
  return new Map(answer.results.map((r) => [r.id, r.properties]));
}

/** The export's record ids, in file order. */
async function exportIds(path: string): Promise<string[]> {
  return (parse(await readFile(path, 'utf8'), { from_line: 2 }) as string[][]).map((row) => row[0] as string);
}

/** Runs the night (the `crmSync` workflow, as a schedule's night runs) with `--write-back hubspot`. */
function runNight(client: Client, config: WorkerConfig, crms: LocalCrms, output: string, run: string) {
  const input: CrmSyncInput = {
    name: `demo-hubspot-${run}`,
    kind: 'enrich',
    input: pathToFileURL(crms.exports.hubspot).href,
    output,
    limit: 5,
    writeBack: { crm: 'hubspot' },
    taskQueue: config.taskQueue,
    apiTaskQueue: config.apiTaskQueue,
  };
  return client.workflow.execute('crmSync', {
    workflowId: `demo-${run}-hubspot-night`,
    taskQueue: config.taskQueue,
    args: [input],
  }) as Promise<SyncResult>;
}

const shown = (value: string | null | undefined) =>
  value === null || value === undefined || value === '' ? '(empty)' : value;

/** Lines of a few records that the night changed: the record, then each field changed, before → after. */
function changedLines(before: Values, after: Values, fields: string[]): string[] {
  const lines: string[] = [];
  let records = 0;
  for (const [id, now] of after) {
    if (records === SHOWN) break;
    const changed = fields.filter((f) => shown(before.get(id)?.[f]) !== shown(now[f]));
    if (changed.length === 0) continue;
    records += 1;
    lines.push(`    record ${id} (${now['name'] ?? ''})`);
    for (const f of changed) lines.push(`      ${f}: ${shown(before.get(id)?.[f])} → ${shown(now[f])}`);
  }
  return lines;
}

/** The night, written back; its summary lines (or why it did not write back) and whether it went well. */
export async function demoWriteBack(
  client: Client,
  config: WorkerConfig,
  crms: LocalCrms,
  output: string,
  run: string,
): Promise<{ lines: string[]; ok: boolean }> {
  const fields = kitFields('hubspot', 'enrich').map((f) => f.name);
  const ids = await exportIds(crms.exports.hubspot);
  const before = await readCompanies(crms, ids, fields);
  const result = await runNight(client, config, crms, output, run);
  const lines = [`  write-back     a night of ${ids.length} HubSpot companies, written back to the local HubSpot`];
  const written = result.writeBack;
  if (written === undefined || 'error' in written) {
    lines.push(`    write-back FAILED: ${written?.error ?? 'the night wrote nothing back'} (night ${result.status})`);
    return { lines, ok: false };
  }
  const after = await readCompanies(crms, ids, fields);
  lines.push(...summaryLines(written, result, fields), ...changedLines(before, after, fields));
  return { lines, ok: result.status === 'completed' && written.rejected === 0 };
}

function summaryLines(written: WriteBackSummary, result: SyncResult, fields: string[]): string[] {
  return [
    `    night ${result.status}: records ${result.records.total}, changed ${result.records.new + result.records.changed}, credits ${result.credits}`,
    `    records written ${written.written}, rejected ${written.rejected}, not attempted ${written.notAttempted}, pending ${written.pending}`,
    `    fields: ${fields.join(', ')}`,
    `    changes ${fileURLToPath(result.changesUrl)}, report ${fileURLToPath(written.reportUrl)}`,
    '    read back through @hubspot/api-client, before → after:',
  ];
}
