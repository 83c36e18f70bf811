import { INPUT_ENCODINGS, type InputEncoding } from '../../activities/input/encoding.ts';
import type { JobResult } from '../../activities/jobs/types.ts';
import { type OutputFormat, parseFormats } from '../../activities/tables/formats.ts';
import { parseTemporalConfig } from '../../config/worker.ts';
import { TemporalOutageError } from '../../connectors/errors.ts';
import { CREDITS, MAX_SIGNALS_PER_CALL, TOPIC_ID_PATTERN } from '../../connectors/signal-api/limits.ts';
import { followJob, type JobStart, startJob } from '../../library/jobs.ts';
import { resultThroughOutage, throughOutage } from '../../library/temporal-outage.ts';
import { jobIdProblem } from '../../workflows/job-id.ts';
import { progressQuery } from '../../workflows/job-progress.ts';
import { isoDate, list, locationUrl, positiveInt, required, signalFilters, UsageError } from '../args.ts';
import {
  budgetMessage,
  chargedMessage,
  defaultJobId,
  EXIT,
  exitCodeOf,
  failedJobResult,
  jobFailureMessage,
} from '../job-outcome.ts';
import { awaitWorkers, noWorkerMessage, queuesWithoutWorker } from '../pollers.ts';
import { ProgressReporter } from '../progress.ts';
import { connectClient } from '../temporal.ts';

/** The flags every job command takes, as commander hands them over (declared in cli/program.ts). */
export interface JobFlags {
  output?: string;
  jobId?: string;
  wait?: boolean;
  dryRun?: boolean;
  compression?: string;
  concurrency?: string;
  /** enrich, verify-emails: formats of the flat tables. */
  format?: string;
}

/** How the rows of an input are identified and handed back (`--column`, `--id-column`, `--keep-columns`). */
export interface ColumnFlags {
  column?: string;
  idColumn?: string;
  keepColumns?: string;
  encoding?: string;
  sheet?: string;
}

export function columnOptions(flags: ColumnFlags): {
  column?: string;
  idColumn?: string;
  keepColumns?: string[];
  encoding?: Exclude<InputEncoding, 'auto'>;
  sheet?: string;
} {
  const keep = list(flags.keepColumns);
  if (flags.encoding !== undefined && !(INPUT_ENCODINGS as readonly string[]).includes(flags.encoding)) {
    throw new UsageError(`--encoding must be one of ${INPUT_ENCODINGS.join(', ')}, got "${flags.encoding}"`);
  }
  return {
    ...(flags.encoding !== undefined && flags.encoding !== 'auto'
      ? { encoding: flags.encoding as Exclude<InputEncoding, 'auto'> }
      : {}),
    ...(flags.sheet !== undefined ? { sheet: flags.sheet } : {}),
    ...(flags.column !== undefined ? { column: flags.column } : {}),
    ...(flags.idColumn !== undefined ? { idColumn: flags.idColumn } : {}),
    ...(keep && keep.length > 0 ? { keepColumns: keep } : {}),
  };
}

export interface EnrichFlags extends JobFlags, ColumnFlags {
  input?: string;
  signalTypes?: string;
  signalSubtypes?: string;
  detectedAfter?: string;
  limit?: string;
  maxCredits?: string;
}

export interface EnrichContactsFlags extends JobFlags, ColumnFlags {
  input?: string;
  signalTypes?: string;
  detectedAfter?: string;
  limit?: string;
  maxCredits?: string;
}

export interface VerifyEmailsFlags extends JobFlags, ColumnFlags {
  input?: string;
  maxCredits?: string;
}

export interface IntentExportFlags extends JobFlags {
  topics?: string;
  emailValidated?: boolean;
  seniority?: string;
  department?: string;
  limit?: string;
  resubmit?: boolean;
}

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

/**
 * `--format`: the flat tables' formats. Not part of the default job id: the same job run again with another format
 * reuses every answer it has and only writes the tables it lacks.
 */
export function tableFormats(value: string | undefined): { formats?: OutputFormat[] } {
  if (value === undefined) return {};
  try {
    return { formats: parseFormats(value) };
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

function compression(value: string | undefined): 'gzip' | 'none' | undefined {
  if (value === undefined || value === 'gzip' || value === 'none') return value;
  throw new UsageError(`--compression must be gzip or none, got "${value}"`);
}

/** `enrich`'s flags as the job to start; every mistake is a `UsageError` naming its flag. */
export function enrichJob(flags: EnrichFlags): JobStart {
  return {
    workflow: 'bulkEnrich',
    input: signalJobInput('enrich', flags, ({ maxCredits, limit, worst, fitting }) =>
      limit === undefined
        ? `--max-credits ${maxCredits} cannot pay for one domain at its worst: without --limit a domain can return ` +
          `${MAX_SIGNALS_PER_CALL} signals (${worst} credits). Add --limit ${fitting} ` +
          `or lower (${CREDITS.perEnrichedSignal} credits per signal), or raise --max-credits to at least ${worst}`
        : `--max-credits ${maxCredits} cannot pay for one domain at its worst (--limit ${limit} = ${worst} credits): ` +
          `lower --limit to ${fitting} or raise --max-credits to at least ${worst}`,
    ),
  };
}

/** `enrich-contacts`'s flags as the job to start; every mistake is a `UsageError` naming its flag. */
export function enrichContactsJob(flags: EnrichContactsFlags): JobStart {
  return {
    workflow: 'enrichContacts',
    input: signalJobInput(
      'contacts',
      flags,
      ({ maxCredits, limit, worst, fitting }) =>
        `--max-credits ${maxCredits} cannot pay for one contact at its worst (${limit === undefined ? `without --limit, ${MAX_SIGNALS_PER_CALL}` : `--limit ${limit}`} signals × ` +
        `${CREDITS.perEnrichedSignal} credits = ${worst}): lower --limit to ${fitting} ` +
        `or raise --max-credits to at least ${worst}`,
    ),
  };
}

/** A budget too small for one item at its worst: what `--max-credits` and `--limit` say, and the limit that fits. */
interface ShortBudget {
  maxCredits: number;
  limit: number | undefined;
  /** Credits of one item at its worst (`--limit`, else the most signals a call returns). */
  worst: number;
  /** The largest `--limit` the budget pays for. */
  fitting: number;
}

/**
 * The workflow input of a job that pays for signals per item (enrich: per company, enrich-contacts: per person): its
 * filters as the API's options, its job id (`--job-id`, else one derived from what makes the job's answers), the
 * locations, row columns, budget, concurrency, compression and table formats. A `--max-credits` that cannot pay for
 * one item at its worst is refused with `tooSmall`'s message.
 */
function signalJobInput(
  kind: 'enrich' | 'contacts',
  flags: (EnrichFlags | EnrichContactsFlags) & { signalSubtypes?: string },
  tooSmall: (budget: ShortBudget) => string,
) {
  const { limit, types, subtypes } = signalFilters(flags);
  const options = {
    ...(types ? { signal_types: types } : {}),
    ...(subtypes ? { signal_subtypes: subtypes } : {}),
    ...(flags.detectedAfter ? { detected_after: isoDate('detected-after', flags.detectedAfter) } : {}),
    ...(limit ? { limit } : {}),
  };
  const input = locationUrl('input', flags.input);
  const output = locationUrl('output', flags.output);
  const maxCredits = positiveInt('max-credits', flags.maxCredits);
  const worst = (limit ?? MAX_SIGNALS_PER_CALL) * CREDITS.perEnrichedSignal;
  if (maxCredits !== undefined && maxCredits < worst) {
    throw new UsageError(
      tooSmall({ maxCredits, limit, worst, fitting: Math.floor(maxCredits / CREDITS.perEnrichedSignal) }),
    );
  }
  return {
    jobId:
      jobIdFlag(flags.jobId) ??
      defaultJobId(kind, { input, output, options, ...columnOptions(flags), ...plain(flags.compression) }),
    input,
    output,
    ...columnOptions(flags),
    options,
    maxCredits,
    concurrency: positiveInt('concurrency', flags.concurrency),
    compression: compression(flags.compression),
    ...tableFormats(flags.format),
  };
}

/** `verify-emails`'s flags as the job to start. */
export function verifyEmailsJob(flags: VerifyEmailsFlags): JobStart {
  const input = locationUrl('input', flags.input);
  const output = locationUrl('output', flags.output);
  return {
    workflow: 'verifyEmails',
    input: {
      jobId:
        jobIdFlag(flags.jobId) ??
        defaultJobId('verify', { input, output, ...columnOptions(flags), ...plain(flags.compression) }),
      input,
      output,
      ...columnOptions(flags),
      maxCredits: positiveInt('max-credits', flags.maxCredits),
      concurrency: positiveInt('concurrency', flags.concurrency),
      compression: compression(flags.compression),
      ...tableFormats(flags.format),
    },
  };
}

/** `intent-export`'s flags as the job to start. */
export function intentExportJob(flags: IntentExportFlags): JobStart {
  const topics = list(required('topics', flags.topics)) ?? [];
  const bad = topics.find((topic) => !TOPIC_ID_PATTERN.test(topic));
  if (bad) throw new UsageError(`--topics: "${bad}" is not a topic id of the form b2b_<number>`);
  const request = {
    topic_ids: topics,
    ...(flags.emailValidated ? { email_validated: true } : {}),
    ...(list(flags.seniority) ? { seniority: list(flags.seniority) } : {}),
    ...(list(flags.department) ? { department: list(flags.department) } : {}),
    ...(flags.limit ? { limit: positiveInt('limit', flags.limit) } : {}),
  };
  const output = locationUrl('output', flags.output);
  return {
    workflow: 'intentExport',
    input: {
      jobId: jobIdFlag(flags.jobId) ?? defaultJobId('intent', { request, output, ...plain(flags.compression) }),
      output,
      request,
      compression: compression(flags.compression),
      // Not part of the job id: it continues the same job, whose earlier submit has an unknown outcome.
      ...(flags.resubmit ? { resubmit: true } : {}),
    },
  };
}

/**
 * `enrich`, `verify-emails`, `intent-export`: start the job, and with --wait follow it to its end (once a worker
 * polls its queues). With --dry-run: print what it would read and could cost, and start nothing.
 */
export async function runJobCommand(job: JobStart, flags: Pick<JobFlags, 'wait' | 'dryRun'>): Promise<number> {
  if (job.workflow !== 'intentExport') {
    // Loaded only here: the storage SDKs are not needed to start or follow an export.
    const [{ checkInputColumns }, { openStore }] = await Promise.all([
      import('../input-columns.ts'),
      import('../../config/storage.ts'),
    ]);
    await checkInputColumns(job, (url) => openStore(url));
  }
  if (flags.dryRun) {
    // Loaded only here: the storage SDKs are not needed to start or follow a job.
    const [{ printDryRun }, { openStore }] = await Promise.all([
      import('../dry-run.ts'),
      import('../../config/storage.ts'),
    ]);
    await printDryRun(job, (url) => openStore(url));
    return EXIT.completed;
  }
  const refused = await refusedIdentity(job);
  if (refused) {
    console.error(`signal-kit: ${refused}; nothing was started`);
    return EXIT.usage;
  }
  const wait = flags.wait === true;
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
      if (error instanceof TemporalOutageError) throw error; // exit 2: the job goes on, unfollowed
      console.error(`signal-kit: ${jobFailureMessage(error)}`);
      // What the failed run was charged, last: the progress shown so far counts only the batches that finished.
      const failed = failedJobResult(error);
      if (failed) console.error(`signal-kit: ${chargedMessage(failed)}`);
      return EXIT.failed;
    }
  } finally {
    await client.connection.close();
  }
}

/** The job kind each job workflow runs (as its parts and manifest name it). */
const JOB_KINDS = {
  bulkEnrich: 'enrich',
  enrichContacts: 'enrich-contacts',
  verifyEmails: 'verify-emails',
  intentExport: 'intent-export',
} as const satisfies Record<JobStart['workflow'], string>;

/**
 * Why this start of a job id is refused: the id was first started with another input or other options (recorded in
 * `<job>/_job.json`). Undefined when it is the same job, a new one, or the record cannot be read from here (the
 * CLI may have no access to the output; the job's first activity checks it again).
 */
async function refusedIdentity(job: JobStart): Promise<string | undefined> {
  const [{ openStore }, identity] = await Promise.all([
    import('../../config/storage.ts'),
    import('../../activities/jobs/job-identity.ts'),
  ]);
  const kind = JOB_KINDS[job.workflow];
  // The options the job's identity holds: enrich's filters, an export's request; none for verify-emails.
  const options =
    job.workflow === 'bulkEnrich' || job.workflow === 'enrichContacts'
      ? { options: { ...(job.input.options ?? {}) } }
      : job.workflow === 'intentExport'
        ? { options: { ...job.input.request } }
        : {};
  const ref = {
    jobId: job.input.jobId,
    kind,
    output: job.input.output,
    compression: job.input.compression ?? 'gzip',
    ...options,
  } as const;
  try {
    const recorded = await identity.readJobIdentity(openStore(job.input.output), ref);
    if (!recorded) return undefined;
    const input = job.workflow === 'intentExport' ? null : job.input.input;
    const column = job.workflow === 'intentExport' ? undefined : job.input.column;
    const now = identity.jobIdentityOf(ref, input, column);
    const differs = identity.identityDifferences(recorded, now);
    return differs.length > 0 ? identity.identityMessage(ref.jobId, recorded, now, differs) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * `status JOB_ID`: the job's state and, while it runs, its progress. A finished job exits with the code `--wait`
 * gives it; a running one with `running`, or `no_worker` when no worker polls its queues.
 */
export async function runStatusCommand(jobId: string): Promise<number> {
  const temporal = parseTemporalConfig();
  const client = await connectClient(temporal);
  try {
    const handle = client.workflow.getHandle(jobId);
    const description = await throughOutage(jobId, () => handle.describe());
    const status = description.status.name;
    if (status === 'RUNNING') {
      const progress = await handle.query(progressQuery).catch(() => undefined);
      const queues = { taskQueue: description.taskQueue, apiTaskQueue: temporal.apiTaskQueue };
      const missing = await queuesWithoutWorker(client, temporal.namespace, queues);
      console.log(JSON.stringify({ jobId, workflow: description.type, status, progress }, null, 2));
      if (missing.length === 0) return EXIT.running;
      console.error(`signal-kit: ${noWorkerMessage(missing, temporal.namespace, temporal.address)}`);
      return EXIT.no_worker;
    }
    const result = status === 'COMPLETED' ? await resultThroughOutage<typeof handle, JobResult>(handle) : undefined;
    console.log(JSON.stringify({ jobId, workflow: description.type, status, result }, null, 2));
    return result ? exitCodeOf(result) : EXIT.failed;
  } finally {
    await client.connection.close();
  }
}
