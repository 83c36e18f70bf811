/**
 * What the nightly CRM sync promise tests share: writing a night's export, running one night on the real workers,
 * reading its files as a CRM import would, and the truth of what a night should buy (from the sandbox's truth and
 * its call record, never from the kit's manifest).
 */
import { parse } from 'csv-parse/sync';
import type { SyncResult } from '../../activities/sync/types.ts';
import { crmColumnName } from '../../connectors/crm/fields.ts';
import type { Store } from '../../connectors/storage/index.ts';
import { rowsTable } from '../../contract/tables/rows.ts';
import type { JobEnv, Sandbox } from '../../testkit/job-env.ts';

export { type ExportRecord, writeExport } from '../../testkit/crm-export.ts';

import type { CrmSyncInput } from '../../workflows/crm-sync.ts';
import { runOnEnvQueues } from './helpers.ts';
import { PATHS } from './oracle.ts';

/** Runs one night (the `crmSync` workflow) to its end on the env's workers. */
export const runSync = (env: JobEnv, id: string, input: Omit<CrmSyncInput, 'taskQueue' | 'apiTaskQueue'>) =>
  runOnEnvQueues<SyncResult>(env, 'crmSync', id, input);

export type CsvRow = Record<string, string>;

/**
 * A CRM file of the sync as a CRM reads it, each row keyed back by the rows table's column names (the exports of these
 * tests have Salesforce's `Id` header, so the file names the enrichment columns as Salesforce API names:
 * `Signal_Count__c`), and its header as written.
 */
export async function readCsvWithHeader(store: Store, url: string): Promise<{ header: string[]; rows: CsvRow[] }> {
  const text = await store.readText(url.slice(store.url.length + 1));
  const [header = [], ...records] = parse(text) as string[][];
  const names = new Map<string, string>();
  for (const kind of ['enrich', 'enrich-contacts'] as const) {
    for (const c of rowsTable(kind).columns) {
      names.set(crmColumnName(c.name, 'salesforce'), c.name);
      names.set(crmColumnName(c.name, 'labels'), c.name);
    }
  }
  const keys = header.map((h, i) => (i === 0 && (h === 'Id' || h === 'Record ID') ? 'record_id' : (names.get(h) ?? h)));
  return { header, rows: records.map((values) => Object.fromEntries(keys.map((k, i) => [k, values[i] ?? '']))) };
}

export async function readCsv(store: Store, url: string): Promise<CsvRow[]> {
  return (await readCsvWithHeader(store, url)).rows;
}

/**
 * The signal ids every bulk enrich call after `mark` bought, rebuilt from the call record (what each call asked: its
 * domains, `detected_after`, `limit`, at the sandbox clock of its arrival) and the sandbox's truth; each call's count
 * per domain is checked against what the sandbox recorded it returned.
 */
export function boughtSignals(sandbox: Sandbox, mark: number): string[] {
  const ids: string[] = [];
  for (const call of sandbox.truth.calls({ path: PATHS.enrichBulk, after: mark })) {
    if (call.status !== 200 || !call.asked) continue;
    const asked = call.asked as { domains: string[]; detected_after: string | null; limit: number };
    const returned = (call.returned as { signalsPerDomain?: Record<string, number> } | undefined)?.signalsPerDomain;
    const window = {
      at: Date.parse(call.at),
      ...(asked.detected_after ? { detected_after: asked.detected_after } : {}),
    };
    for (const truth of sandbox.truth.companySignals(asked.domains, window)) {
      if (truth.status !== 'ok') continue;
      const bought = truth.signals.slice(0, asked.limit);
      if (returned && returned[truth.domain] !== bought.length) {
        throw new Error(`call ${call.seq}: ${truth.domain} returned ${returned[truth.domain]}, truth ${bought.length}`);
      }
      ids.push(...bought.map((s) => s.signal_id));
    }
  }
  return ids;
}
