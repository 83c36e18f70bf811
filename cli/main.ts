#!/usr/bin/env node
// Only dependency-free modules are imported up front: `--help` and the Node version check must work without loading
// undici or the Temporal SDK (which do not even load on an old Node). Commands are imported when they run.
import { ConfigError } from '../config/errors.ts';
import { UsageError } from './args.ts';
import { nodeTooOld } from './node-version.ts';

const USAGE = `signal-kit: durable jobs for the Signal Data Service

  signal-kit demo                      run the main job end to end on a local stack (sandbox + Temporal + ./out)
  signal-kit dev                       start a local stack (Temporal, S3, GCS, sandbox) and a worker; print its settings
  signal-kit worker [--health-port N] [--metrics-port N] [--make-current]
                                       run a worker (SIGNAL_API_URL, SIGNAL_API_KEY, TEMPORAL_ADDRESS, ...)
  signal-kit build-workflows [--output DIR] [--workflows PATH]
                                       write the workflow bundle a prebuilt worker starts from
  signal-kit enrich --input URL --output URL [--column NAME] [--signal-types a,b] [--signal-subtypes a,b]
                    [--detected-after ISO] [--limit N] [--max-credits N] [--concurrency N] [--job-id ID]
                    [--wait | --dry-run]
  signal-kit verify-emails --input URL --output URL [--column NAME] [--max-credits N] [--job-id ID]
                    [--wait | --dry-run]
  signal-kit intent-export --topics b2b_1,b2b_2 --output URL [--email-validated] [--seniority Vp,Cxo]
                    [--department a,b] [--limit N] [--job-id ID] [--resubmit] [--wait | --dry-run]
  signal-kit schedule create --name NAME --watchlist URL --output URL --every 6h [--signal-types a,b] [--overlap P]
  signal-kit schedule list | describe NAME | pause NAME | unpause NAME | trigger NAME | delete NAME
  signal-kit schedule run NAME [--full-refresh] [--wait] | state NAME [--domain D] | reset NAME [--domain D]
  signal-kit schedule backfill NAME --from ISO --to ISO [--wait]
  signal-kit webhooks serve --port N [--host 127.0.0.1] [--auth signature|token|none] [--allow-unauthenticated]
  signal-kit webhooks subscribe --url URL --types a,b [--description TEXT]
  signal-kit webhooks list | update ID [--url URL] [--types a,b] [--status active|paused] | delete ID | test ID
  signal-kit status JOB_ID
  signal-kit sandbox [--port N] [--seed N] [--rate-limit N] [--credits N]

--dry-run reads the input and prints rows, distinct, invalid, batches and credits; it starts nothing and calls no API.

Exit codes (--wait and status): 0 completed, 1 failed, 2 bad usage or configuration, 3 budget exhausted,
4 completed with failed batches, 5 still running (status), 6 no worker polls the job's task queues.`;

type Command = (argv: string[]) => Promise<number>;

const commands: Record<string, Command> = {
  enrich: async (argv) => {
    const jobs = await import('./commands/job-commands.ts');
    return jobs.runJobCommand(jobs.parseEnrich, argv);
  },
  'verify-emails': async (argv) => {
    const jobs = await import('./commands/job-commands.ts');
    return jobs.runJobCommand(jobs.parseVerifyEmails, argv);
  },
  'intent-export': async (argv) => {
    const jobs = await import('./commands/job-commands.ts');
    return jobs.runJobCommand(jobs.parseIntentExport, argv);
  },
  status: async (argv) => (await import('./commands/job-commands.ts')).runStatusCommand(argv),
  schedule: async (argv) => (await import('./commands/schedule.ts')).runScheduleCommand(argv),
  webhooks: async (argv) => (await import('./commands/webhooks.ts')).runWebhooksCommand(argv),
  worker: async (argv) => (await import('./commands/worker.ts')).runWorkerCommand(argv),
  'build-workflows': async (argv) => (await import('./commands/build-workflows.ts')).runBuildWorkflowsCommand(argv),
  demo: async (argv) => (await import('./commands/demo.ts')).runDemoCommand(argv),
  dev: async (argv) => (await import('./commands/dev.ts')).runDevCommand(argv),
  sandbox: async (argv) => (await import('../sandbox/main.ts')).runSandboxCli(argv),
};

async function main(argv: string[]): Promise<number> {
  const tooOld = nodeTooOld(process.versions.node);
  if (tooOld) {
    console.error(tooOld);
    return 2;
  }
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    console.log(USAGE);
    return name ? 0 : 2;
  }
  const command = commands[name];
  if (!command) {
    console.error(`signal-kit: unknown command "${name}"\n\n${USAGE}`);
    return 2;
  }
  try {
    return await command(rest);
  } catch (error) {
    if (error instanceof UsageError || error instanceof ConfigError || isParseArgsError(error)) {
      console.error(`signal-kit ${name}: ${(error as Error).message}`);
      return 2;
    }
    console.error(`signal-kit ${name}: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
}

function isParseArgsError(error: unknown): boolean {
  return (
    error instanceof TypeError &&
    typeof (error as { code?: unknown }).code === 'string' &&
    String((error as unknown as { code: string }).code).startsWith('ERR_PARSE_ARGS')
  );
}

process.exitCode = await main(process.argv.slice(2));
