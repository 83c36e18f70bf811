import { parseArgs } from 'node:util';
import type { JobResult } from '../../activities/jobs/types.ts';
import { parseTemporalConfig } from '../../config/worker.ts';
import { CREDITS, MAX_SIGNALS_PER_CALL } from '../../connectors/signal-api/limits.ts';
import { jobIdProblem } from '../../workflows/job-id.ts';
import { isoDate, list, locationUrl, positiveInt, required, UsageError } from '../args.ts';
import {
  budgetMessage,
  defaultJobId,
  EXIT,
  exitCodeOf,
  followJob,
  type JobStart,
  jobFailureMessage,
  startJob,
} from '../job-service.ts';
import { awaitWorkers, noWorkerMessage, queuesWithoutWorker } from '../pollers.ts';
import { ProgressReporter } from '../progress.ts';
import { connectClient } from '../temporal.ts';

const common = {
  output: { type: 'string' },
  'job-id': { type: 'string' },
  wait: { type: 'boolean', default: false },
  'dry-run': { type: 'boolean', default: false },
  compression: { type: 'string' },
  concurrency: { type: 'string' },
} as const;

/** `--job-id`, checked before anything starts: it names a folder under the output. */
function jobIdFlag(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const problem = jobIdProblem(value);
  if (problem) throw new UsageError(`--job-id: ${problem}`);
  return value;
}

/** Uncompressed output is another output, so another job; the default (gzip) leaves ids as they always were. */
function plain(value: string | undefined): { compression?: 'none' } {
  return value === 'none' ? { compression: 'none' } : {};
}

function compression(value: string | undefined): 'gzip' | 'none' | undefined {
  if (value === undefined || value === 'gzip' || value === 'none') return value;
  throw new UsageError(`--compression must be gzip or none, got "${value}"`);
}

export function parseEnrich(argv: string[]): JobStart {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      ...common,
      input: { type: 'string' },
      column: { type: 'string' },
      'signal-types': { type: 'string' },
      'signal-subtypes': { type: 'string' },
      'detected-after': { type: 'string' },
      limit: { type: 'string' },
      'max-credits': { type: 'string' },
    },
  });
  const limit = positiveInt('limit', values.limit);
  if (limit !== undefined && limit > 500) throw new UsageError('--limit must be at most 500 (signals per domain)');
  const subtypes = list(values['signal-subtypes']);
  if (subtypes && subtypes.length > 25) throw new UsageError('--signal-subtypes takes at most 25 subtypes');
  const options = {
    ...(list(values['signal-types']) ? { signal_types: list(values['signal-types']) } : {}),
    ...(subtypes ? { signal_subtypes: subtypes } : {}),
    ...(values['detected-after'] ? { detected_after: isoDate('detected-after', values['detected-after']) } : {}),
    ...(limit ? { limit } : {}),
  };
  const input = locationUrl('input', values.input);
  const output = locationUrl('output', values.output);
  const maxCredits = positiveInt('max-credits', values['max-credits']);
  const perDomain = (limit ?? MAX_SIGNALS_PER_CALL) * CREDITS.perEnrichedSignal;
  if (maxCredits !== undefined && maxCredits < perDomain) {
    throw new UsageError(
      limit === undefined
        ? `--max-credits ${maxCredits} cannot pay for one domain at its worst: without --limit a domain can return ` +
            `${MAX_SIGNALS_PER_CALL} signals (${perDomain} credits). Add --limit ${Math.floor(maxCredits / CREDITS.perEnrichedSignal)} ` +
            `or lower (2 credits per signal), or raise --max-credits to at least ${perDomain}`
        : `--max-credits ${maxCredits} cannot pay for one domain at its worst (--limit ${limit} = ${perDomain} credits): ` +
            `lower --limit to ${Math.floor(maxCredits / CREDITS.perEnrichedSignal)} or raise --max-credits to at least ${perDomain}`,
    );
  }
  return {
    workflow: 'bulkEnrich',
    input: {
      jobId:
        jobIdFlag(values['job-id']) ??
        defaultJobId('enrich', { input, output, options, column: values.column, ...plain(values.compression) }),
      input,
      output,
      column: values.column,
      options,
      maxCredits,
      concurrency: positiveInt('concurrency', values.concurrency),
      compression: compression(values.compression),
    },
  };
}

export function parseVerifyEmails(argv: string[]): JobStart {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: { ...common, input: { type: 'string' }, column: { type: 'string' }, 'max-credits': { type: 'string' } },
  });
  const input = locationUrl('input', values.input);
  const output = locationUrl('output', values.output);
  return {
    workflow: 'verifyEmails',
    input: {
      jobId:
        jobIdFlag(values['job-id']) ??
        defaultJobId('verify', { input, output, column: values.column, ...plain(values.compression) }),
      input,
      output,
      column: values.column,
      maxCredits: positiveInt('max-credits', values['max-credits']),
      concurrency: positiveInt('concurrency', values.concurrency),
      compression: compression(values.compression),
    },
  };
}

export function parseIntentExport(argv: string[]): JobStart {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      ...common,
      topics: { type: 'string' },
      'email-validated': { type: 'boolean', default: false },
      seniority: { type: 'string' },
      department: { type: 'string' },
      limit: { type: 'string' },
      resubmit: { type: 'boolean', default: false },
    },
  });
  const topics = list(required('topics', values.topics)) ?? [];
  const bad = topics.find((topic) => !/^b2b_\d+$/.test(topic));
  if (bad) throw new UsageError(`--topics: "${bad}" is not a topic id of the form b2b_<number>`);
  const request = {
    topic_ids: topics,
    ...(values['email-validated'] ? { email_validated: true } : {}),
    ...(list(values.seniority) ? { seniority: list(values.seniority) } : {}),
    ...(list(values.department) ? { department: list(values.department) } : {}),
    ...(values.limit ? { limit: positiveInt('limit', values.limit) } : {}),
  };
  const output = locationUrl('output', values.output);
  return {
    workflow: 'intentExport',
    input: {
      jobId: jobIdFlag(values['job-id']) ?? defaultJobId('intent', { request, output, ...plain(values.compression) }),
      output,
      request,
      compression: compression(values.compression),
      // Not part of the job id: it continues the same job, whose earlier submit has an unknown outcome.
      ...(values.resubmit ? { resubmit: true } : {}),
    },
  };
}

/**
 * `enrich`, `verify-emails`, `intent-export`: start the job, and with --wait follow it to its end (once a worker
 * polls its queues). With --dry-run: print what it would read and could cost, and start nothing.
 */
export async function runJobCommand(parse: (argv: string[]) => JobStart, argv: string[]): Promise<number> {
  const job = parse(argv);
  if (argv.includes('--dry-run')) {
    // Loaded only here: the storage SDKs are not needed to start or follow a job.
    const [{ dryRun }, { openStore }] = await Promise.all([
      import('../dry-run.ts'),
      import('../../connectors/storage/index.ts'),
    ]);
    console.log(JSON.stringify(await dryRun(job, (url) => openStore(url)), null, 2));
    return EXIT.completed;
  }
  const wait = argv.includes('--wait');
  const temporal = parseTemporalConfig();
  const client = await connectClient(temporal);
  try {
    if (wait) {
      const missing = await awaitWorkers(client, temporal.namespace, temporal);
      if (missing.length > 0) {
        console.error(
          `signal-kit: ${noWorkerMessage(missing, temporal.namespace, temporal.address)}; nothing was started`,
        );
        return EXIT.no_worker;
      }
    }
    const handle = await startJob(client, temporal, job);
    if (!wait) {
      console.log(JSON.stringify({ jobId: job.input.jobId, workflowId: handle.workflowId, started: true }));
      return EXIT.completed;
    }
    try {
      const result = await followJob(handle, new ProgressReporter());
      console.log(JSON.stringify(result, null, 2));
      if (result.status === 'budget_exhausted') console.error(`signal-kit: ${budgetMessage(job, result)}`);
      return exitCodeOf(result);
    } catch (error) {
      console.error(`signal-kit: ${jobFailureMessage(error)}`);
      return EXIT.failed;
    }
  } finally {
    await client.connection.close();
  }
}

/**
 * `status JOB_ID`: the job's state and, while it runs, its progress. A finished job exits with the code `--wait`
 * gives it; a running one with `running`, or `no_worker` when no worker polls its queues.
 */
export async function runStatusCommand(argv: string[]): Promise<number> {
  const jobId = argv[0];
  if (!jobId || jobId.startsWith('-')) throw new UsageError('usage: signal-kit status JOB_ID');
  const temporal = parseTemporalConfig();
  const client = await connectClient(temporal);
  try {
    const handle = client.workflow.getHandle(jobId);
    const description = await handle.describe();
    const status = description.status.name;
    if (status === 'RUNNING') {
      const progress = await handle.query('progress').catch(() => undefined);
      const queues = { taskQueue: description.taskQueue, apiTaskQueue: temporal.apiTaskQueue };
      const missing = await queuesWithoutWorker(client, temporal.namespace, queues);
      console.log(JSON.stringify({ jobId, workflow: description.type, status, progress }, null, 2));
      if (missing.length === 0) return EXIT.running;
      console.error(`signal-kit: ${noWorkerMessage(missing, temporal.namespace, temporal.address)}`);
      return EXIT.no_worker;
    }
    const result = status === 'COMPLETED' ? ((await handle.result()) as JobResult) : undefined;
    console.log(JSON.stringify({ jobId, workflow: description.type, status, result }, null, 2));
    return result ? exitCodeOf(result) : EXIT.failed;
  } finally {
    await client.connection.close();
  }
}
