import { copyFile, mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { JobResult } from '../../activities/jobs/types.ts';
import { repoRoot } from '../../devstack/binaries.ts';
import { startDevStack } from '../../devstack/index.ts';
import { followJob, startJob } from '../../library/jobs.ts';
import { startSandbox } from '../../sandbox/index.ts';
import { crmWritersFrom } from '../../workers/crm-writers.ts';
import { startWorker } from '../../workers/worker.ts';
import { DEMO_NIGHT_ACCOUNTS, demoWriteBack } from '../demo-write-back.ts';
import { jobFailureMessage } from '../job-outcome.ts';
import { demoAccounts, startLocalCrms } from '../local-crms.ts';
import { localWorkerConfig } from '../local-stack.ts';
import { installWorkerLogging } from '../logging.ts';
import { connectClient } from '../temporal.ts';

const example = (name: string) => join(repoRoot(), 'examples', name);

/**
 * The main job end to end on one machine: a local Temporal dev server, the sandbox API, a local HubSpot and a worker;
 * enriches a messy CRM export, verifies a list of emails and runs an intent export, all into ./out/, prints a summary,
 * then runs one night of the nightly sync on the local HubSpot's export and writes it back to that HubSpot.
 */
export async function runDemoCommand(flags: { output?: string } = {}): Promise<number> {
  const outDir = resolve(flags.output ?? 'out');
  await mkdir(outDir, { recursive: true });
  const output = pathToFileURL(outDir).href;
  const log = (message: string) => console.error(`[demo] ${message}`);

  installWorkerLogging();
  log('starting a local Temporal dev server, the sandbox API and a local HubSpot (127.0.0.1 only)');
  const stack = await startDevStack({ temporal: true, s3: false, gcs: false });
  const sandbox = await startSandbox({ seed: 42 });
  const crms = await startLocalCrms({
    accounts: await demoAccounts(DEMO_NIGHT_ACCOUNTS),
    dir: outDir,
    salesforce: false,
  });
  const config = localWorkerConfig(stack.temporal, sandbox.url);
  let worker: Awaited<ReturnType<typeof startWorker>> | undefined;
  try {
    log('starting a worker (bundling workflows takes a few seconds)');
    worker = await startWorker({ config, deps: { crmWriter: crmWritersFrom(crms.env) } });
    const client = await connectClient(config);
    const run = new Date()
      .toISOString()
      .replace(/[-:]/g, '')
      .replace(/\.\d+Z$/, 'Z');
    const jobs = [
      startJob(client, config, {
        workflow: 'bulkEnrich',
        input: {
          jobId: `demo-${run}-enrich`,
          input: pathToFileURL(example('crm-export.csv')).href,
          output,
          options: { limit: 5 },
          concurrency: 4,
          // A Salesforce-shaped export: its Id, Website and Name columns are found by their headers.
          keepColumns: ['OwnerId'],
          formats: ['csv'],
        },
      }),
      startJob(client, config, {
        workflow: 'verifyEmails',
        input: { jobId: `demo-${run}-verify`, input: pathToFileURL(example('emails.csv')).href, output },
      }),
      startJob(client, config, {
        workflow: 'intentExport',
        input: {
          jobId: `demo-${run}-intent`,
          output,
          request: { topic_ids: ['b2b_101', 'b2b_2048'], seniority: ['Cxo', 'Vp', 'Director'] },
          poll: { initialMs: 500 },
        },
      }),
    ];
    log('running: enrich crm-export.csv, verify emails.csv, intent export b2b_101 + b2b_2048');
    const settled = await Promise.allSettled(jobs.map(async (handle) => followJob(await handle)));
    const results = settled.map((s) => (s.status === 'fulfilled' ? s.value : undefined));
    printSummary(results, settled, sandbox.ledger.total());
    const enriched = results[0];
    if (enriched) {
      const file = await joinRowsCsv(join(outDir, enriched.jobId), join(outDir, `${enriched.jobId}-crm-import.csv`));
      if (file) console.log(`  one CSV row per account, under its Id, to import back into the CRM: ${file}\n`);
    }
    log(`running one night of the nightly sync on the local HubSpot's ${DEMO_NIGHT_ACCOUNTS} companies, written back`);
    const night = await demoWriteBack(client, config, crms, output, run).catch((error: unknown) => ({
      lines: [`  write-back     FAILED: ${jobFailureMessage(error)}`],
      ok: false,
    }));
    await client.connection.close();
    console.log(`${night.lines.join('\n')}\n`);
    return settled.every((s) => s.status === 'fulfilled' && s.value.status === 'completed') && night.ok ? 0 : 1;
  } finally {
    await worker?.shutdown();
    await crms.stop();
    await sandbox.stop();
    await stack.stop();
  }
}

/** The job's `rows.csv` (every input row once, under its record id), copied where the demo names it. */
async function joinRowsCsv(jobDir: string, target: string): Promise<string | undefined> {
  try {
    await copyFile(join(jobDir, 'rows.csv'), target);
    return target;
  } catch {
    return undefined;
  }
}

function printSummary(
  results: (JobResult | undefined)[],
  settled: PromiseSettledResult<JobResult>[],
  ledgerCredits: number,
): void {
  const lines = ['', 'signal-kit demo: summary', ''];
  settled.forEach((outcome, index) => {
    const result = results[index];
    if (!result) {
      lines.push(`  job ${index + 1}: FAILED: ${jobFailureMessage((outcome as PromiseRejectedResult).reason)}`);
      return;
    }
    const c = result.counts;
    lines.push(`  ${result.kind.padEnd(14)} ${result.status}`);
    if (result.kind === 'intent-export') {
      // An export reads no input: its lines are the contacts the service exported.
      lines.push(`    contacts exported ${c.lines}`);
    } else {
      lines.push(`    rows in ${c.input_rows}, distinct ${c.distinct}, duplicates ${c.duplicates}`);
      const statuses = result.kind === 'enrich' ? `ok ${c.ok}, not_found ${c.not_found}, ` : `ok ${c.ok}, `;
      lines.push(
        `    lines out ${c.lines}: ${statuses}error ${c.error}, invalid ${c.invalid}, duplicate ${c.duplicates}`,
      );
    }
    if (result.summary) {
      const s = result.summary;
      lines.push(
        `    verification: deliverable ${s.deliverable}, undeliverable ${s.undeliverable}, risky ${s.risky}, unknown ${s.unknown} (free)`,
      );
    }
    const parts = `${result.parts} ${result.parts === 1 ? 'part' : 'parts'}`;
    lines.push(`    credits ${result.credits}, ${parts}, manifest ${result.manifestUrl}`);
  });
  const first = results.find((r) => r?.kind === 'enrich' && r.parts > 0);
  if (first?.manifestUrl.startsWith('file:')) {
    // Parts are gzipped JSONL (one JSON object a line); the first part of the enrich job is named after its manifest.
    const part = fileURLToPath(first.manifestUrl.replace(/_manifest\.json$/, 'parts/part-00000.jsonl.gz'));
    lines.push('', `  read a part (gzipped JSONL, one JSON object a line): gunzip -c ${part} | head -n 3`);
  }
  const total = results.reduce((sum, r) => sum + (r?.credits ?? 0), 0);
  lines.push('', `  credits reported by the jobs: ${total}; charged by the sandbox ledger: ${ledgerCredits}`, '');
  console.log(lines.join('\n'));
}
