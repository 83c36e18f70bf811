/**
 * crm-write-back: a night's changed records written to a CRM's local stand-in through the kit's writer, as the
 * nightly write-back does. Per CRM: the API calls made against the minimum the CRM allows, records/s, and the
 * writer's peak resident memory (its own process; the stand-in runs in the benchmark's).
 *
 * HubSpot: n records into `companies`, 100 a batch update, so the minimum is ceil(n / 100) calls. Two runs: with the
 * limits off (what the writer and the client cost), and paced (a ten-second window smaller than the night, plus a
 * burst of 429s): the writer waits the window out and every 429 it is given, and makes no other extra call. Every
 * value is read back from the stand-in's records and compared.
 *
 * Salesforce: n records into `Account` through the JWT bearer flow, as a night of that size goes (one Bulk API 2.0
 * ingest job: the minimum is one job and seven calls, create, upload, close, one look at its state, its three result
 * files), then forced through sObject Collections for comparison (ceil(n / 200) calls). See
 * bench/lib/salesforce-write-back.ts.
 *
 *   node bench/run.ts crm-write-back [--size smoke]
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { CrmRecordUpdate } from '../connectors/crm/writer.ts';
import { type RateLimitOptions, startHubspotStandIn } from '../crm-sandbox/hubspot/index.ts';
import { mib, num, secs } from './lib/format.ts';
import { type SalesforceRun, salesforceRuns } from './lib/salesforce-write-back.ts';
import type { Benchmark, BenchResult, RunOptions, Size } from './lib/types.ts';

export const SIZES = {
  full: { records: 10_000, paced: { perInterval: 40, intervalMs: 10_000, daily: 250_000 }, burst: 2 },
  smoke: { records: 250, paced: { perInterval: 2, intervalMs: 300, daily: 250_000 }, burst: 1 },
} as const;

const HUBSPOT_CHILD = fileURLToPath(new URL('./lib/hubspot-write-child.ts', import.meta.url));

interface ChildReport {
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

export interface HalfRun extends ChildReport {
  crm: string;
  run: string;
  records: number;
  minimumCalls: number;
  /** 429s the stand-in was told to give (each costs one refused call). */
  refusedByFault: number;
  valuesEqual: boolean;
}

function updatesFor(ids: string[]): CrmRecordUpdate[] {
  return ids.map((id, i) => ({
    id,
    values: {
      numberofemployees: 10 + (i % 5000),
      description: `Signals seen: ${i % 97}`,
      founded_year: String(1950 + (i % 70)),
    },
  }));
}

async function hubspotRun(
  dir: string,
  records: number,
  label: string,
  rateLimit: Partial<RateLimitOptions>,
  burst: number,
): Promise<HalfRun> {
  const hubspot = await startHubspotStandIn({ rateLimit });
  try {
    const ids = hubspot.plant(
      'companies',
      Array.from({ length: records }, (_, i) => ({ name: `Company ${i}` })),
    );
    const updates = updatesFor(ids);
    const file = join(dir, `hubspot-${label.replace(/\W+/g, '-')}.json`);
    await writeFile(file, JSON.stringify(updates));
    if (burst) hubspot.fault({ status: 429, times: burst, path: '/batch/update' });
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--expose-gc', HUBSPOT_CHILD, '--url', hubspot.url, '--updates', file],
      {
        env: { ...process.env, HUBSPOT_ACCESS_TOKEN: hubspot.token },
        maxBuffer: 1024 * 1024,
      },
    );
    const report = JSON.parse(stdout.trim().split('\n').at(-1) as string) as ChildReport;
    const valuesEqual = updates.every((u) => {
      const held = hubspot.record('companies', u.id)?.properties ?? {};
      return Object.entries(u.values).every(([k, v]) => held[k] === String(v));
    });
    const minimumCalls = Math.ceil(records / 100);
    return { crm: 'hubspot', run: label, records, minimumCalls, refusedByFault: burst, valuesEqual, ...report };
  } finally {
    await hubspot.close();
  }
}

function callsCell(r: HalfRun | SalesforceRun): string {
  const calls = `${r.calls} (min ${r.minimumCalls})`;
  return 'ingestJobs' in r && r.minimumIngestJobs > 0 ? `${calls}; ingest jobs ${r.ingestJobs} (min 1)` : calls;
}

function row(r: HalfRun | SalesforceRun): (string | number)[] {
  return [
    `${r.crm}, ${r.run}`,
    r.records,
    r.written,
    callsCell(r),
    r.pauses ? `${r.pauses}, ${secs(r.pausedMs)}` : '0',
    secs(r.ms),
    num(r.records / (r.ms / 1000), 0),
    mib(r.maxRssKb),
    mib(Math.max(0, r.maxRssKb - r.rssBeforeKb)),
  ];
}

export async function run(size: Size, options: RunOptions = {}): Promise<BenchResult> {
  const log = options.log ?? ((line: string) => console.error(line));
  const startedAt = new Date();
  const { records, paced, burst } = SIZES[size];
  const dir = await mkdtemp(join(tmpdir(), 'crm-write-back-'));
  const runs: (HalfRun | SalesforceRun)[] = [];
  try {
    log(`crm-write-back: hubspot, ${records} records, limits off`);
    runs.push(await hubspotRun(dir, records, 'limits off', { perInterval: 0, daily: 1_000_000 }, 0));
    log(
      `crm-write-back: hubspot, ${records} records, ${paced.perInterval} calls a ${paced.intervalMs} ms window and ${burst} 429s`,
    );
    runs.push(
      await hubspotRun(
        dir,
        records,
        `paced (${paced.perInterval} calls / ${secs(paced.intervalMs)}, ${burst} × 429)`,
        paced,
        burst,
      ),
    );
    runs.push(...(await salesforceRuns(dir, records, log)));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  const checks: Record<string, boolean> = {};
  for (const r of runs) {
    checks[`${r.crm} ${r.run}: every record written`] =
      r.written === r.records && r.rejected === 0 && r.notAttempted === 0;
    checks[`${r.crm} ${r.run}: values read back equal`] = r.valuesEqual;
    // An ingest job's state is asked until the CRM has processed it: the looks that found it still processing (the
    // stand-in's count) are its processing time, not calls the writer wastes; every other call is exact.
    const processing = 'checksWhileProcessing' in r ? r.checksWhileProcessing : 0;
    checks[`${r.crm} ${r.run}: calls = minimum + 429s given + looks while processing`] =
      r.calls === r.minimumCalls + r.refusedByFault + processing;
    if ('ingestJobs' in r) checks[`${r.crm} ${r.run}: ingest jobs = minimum`] = r.ingestJobs === r.minimumIngestJobs;
  }
  return {
    name: 'crm-write-back',
    size,
    title: `${records} changed records written back through the kit's CRM writers into local stand-ins`,
    startedAt: startedAt.toISOString(),
    durationS: (Date.now() - startedAt.getTime()) / 1000,
    table: {
      columns: [
        'CRM, run',
        'records',
        'written',
        'API calls',
        'pauses',
        'time',
        'records/s',
        'writer peak RSS',
        'peak − before write',
      ],
      rows: runs.map(row),
    },
    metrics: { runs },
    checks,
    notes: [
      'HubSpot: batch update of 100 records a call, the minimum HubSpot allows; refused 429 calls are counted in API calls.',
      'The paced run shows the writer waiting out a spent ten-second window (read from X-HubSpot-RateLimit-Remaining) and each 429 (its X-HubSpot-RateLimit-Interval-Milliseconds): time there is the limits, not the writer.',
      'Salesforce: a night past 2,000 records is one Bulk API 2.0 ingest job, seven calls whatever its size; the sObject Collections row (200 records a call) is what the same night would cost without Bulk API. The JWT bearer sign-in and one describe before the write are not counted.',
      "Peak RSS is the writer's process (getrusage maxRSS), the updates it was handed included; the stand-in runs in the benchmark's process.",
    ],
  };
}

export const benchmark: Benchmark = {
  name: 'crm-write-back',
  description:
    "a night's changed records written to the CRM stand-ins: API calls vs the minimum, records/s, peak memory",
  run,
};
