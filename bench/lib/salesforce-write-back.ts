/**
 * The Salesforce half of bench/crm-write-back.ts: n changed Accounts written into the Salesforce stand-in by the
 * kit's writer in its own process (bench/lib/salesforce-write-child.ts), twice: as a night of that size goes (one
 * Bulk API 2.0 ingest job past 2,000 records), and forced through sObject Collections (200 records a call) for
 * comparison. The minimum for an ingest job is one job and seven calls (create, upload, close, one look at its state,
 * its three result files); for Collections ceil(n / 200) calls. Every value is read back from the stand-in's records.
 */
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { CrmRecordUpdate } from '../../connectors/crm/writer.ts';
import { startSalesforceStandIn } from '../../crm-sandbox/salesforce/index.ts';

const CHILD = fileURLToPath(new URL('./salesforce-write-child.ts', import.meta.url));

/** Calls of one ingest job at the least: create, upload, close, one state check, three result files. */
export const INGEST_JOB_MINIMUM_CALLS = 7;

export interface SalesforceRun {
  crm: 'salesforce';
  run: string;
  records: number;
  minimumCalls: number;
  /** The stand-in's count of ingest jobs created during the write, and the least the write could create. */
  ingestJobs: number;
  minimumIngestJobs: number;
  refusedByFault: number;
  /** Looks at the job's state that found it still being processed (the stand-in's count): its processing time. */
  checksWhileProcessing: number;
  valuesEqual: boolean;
  calls: number;
  written: number;
  rejected: number;
  notAttempted: number;
  pauses: number;
  pausedMs: number;
  ms: number;
  rssBeforeKb: number;
  maxRssKb: number;
}

function updatesFor(ids: string[]): CrmRecordUpdate[] {
  return ids.map((id, i) => ({
    id,
    values: {
      Signal_Count__c: i % 97,
      Signal_Company_Name__c: `Company ${i}, "signals"`,
      Signal_Last_Seen__c: `2026-${String((i % 12) + 1).padStart(2, '0')}-15`,
    },
  }));
}

async function oneRun(
  dir: string,
  records: number,
  mode: 'ingest job' | 'sObject Collections',
): Promise<SalesforceRun> {
  const org = await startSalesforceStandIn();
  try {
    const ids = org.records.seed(
      'Account',
      Array.from({ length: records }, (_, i) => ({ Name: `Account ${i}` })),
    );
    const updates = updatesFor(ids);
    const file = join(dir, `salesforce-${mode.replace(/\W+/g, '-')}.json`);
    await writeFile(file, JSON.stringify(updates));
    const threshold = mode === 'ingest job' ? 0 : Number.MAX_SAFE_INTEGER;
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--expose-gc', CHILD, '--updates', file, '--bulk-threshold', String(threshold)],
      {
        env: {
          ...process.env,
          SALESFORCE_LOGIN_URL: org.loginUrl,
          SALESFORCE_CLIENT_ID: org.clientId,
          SALESFORCE_USERNAME: org.username,
          SALESFORCE_PRIVATE_KEY_FILE: org.privateKeyFile,
        },
        maxBuffer: 1024 * 1024,
      },
    );
    const report = JSON.parse(stdout.trim().split('\n').at(-1) as string) as Omit<
      SalesforceRun,
      | 'crm'
      | 'run'
      | 'records'
      | 'minimumCalls'
      | 'ingestJobs'
      | 'minimumIngestJobs'
      | 'refusedByFault'
      | 'checksWhileProcessing'
      | 'valuesEqual'
    >;
    const valuesEqual = updates.every((u) => {
      const held = org.records.get(u.id) ?? {};
      return Object.entries(u.values).every(([k, v]) => held[k] === v);
    });
    const bulk = mode === 'ingest job';
    return {
      crm: 'salesforce',
      run: mode,
      records,
      minimumCalls: bulk ? INGEST_JOB_MINIMUM_CALLS : Math.ceil(records / 200),
      ingestJobs: org.ingestJobsCreated,
      checksWhileProcessing: org.ingestChecksWhileProcessing,
      minimumIngestJobs: bulk ? 1 : 0,
      refusedByFault: 0,
      valuesEqual,
      ...report,
    };
  } finally {
    await org.close();
  }
}

export async function salesforceRuns(
  dir: string,
  records: number,
  log: (line: string) => void,
): Promise<SalesforceRun[]> {
  log(`crm-write-back: salesforce, ${records} records, one ingest job`);
  const bulk = await oneRun(dir, records, 'ingest job');
  log(`crm-write-back: salesforce, ${records} records, sObject Collections for comparison`);
  const collections = await oneRun(dir, records, 'sObject Collections');
  return [bulk, collections];
}
