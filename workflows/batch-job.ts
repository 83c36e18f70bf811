import {
  type ActivityOptions,
  ApplicationFailure,
  patched,
  proxyActivities,
  setCurrentDetails,
  setHandler,
} from '@temporalio/workflow';
import type { InputEncoding } from '../activities/input/encoding.ts';
import type { PerItemBatchRequest } from '../activities/jobs/single-calls.ts';
import type { BatchResult, JobKind, JobRef, PreparedInput } from '../activities/jobs/types.ts';
import type { ApiActivities, JobActivities } from '../activities/registry.ts';
import type { OutputFormat } from '../activities/tables/formats.ts';
import { FAILURE_TYPE } from '../connectors/errors.ts';
import { apiActivityOptions, isFatalFailure, storageActivityOptions } from './activity-options.ts';
import {
  type BatchTotals,
  emptyTotals,
  failureMessage,
  finishRun,
  runWindow,
  type WindowOutcome,
} from './batch-runner.ts';
import {
  DEFAULT_API_TASK_QUEUE,
  DEFAULT_BATCH_CONCURRENCY,
  DEFAULT_BATCHES_PER_RUN,
  DEFAULT_TASK_QUEUE,
} from './constants.ts';
import { jobIdProblem } from './job-id.ts';
import { batchSummary, type JobProgress, type JobResult, progressDetails, progressQuery } from './job-progress.ts';
import type { JobActivityProxy } from './run-state.ts';

/** The patch id of running a job's first window while its whole input is still being prepared. */
export const PREPARE_START_PATCH = 'prepare-input-start';

/** Arguments common to every batched job (enrichment, email verification). */
export interface BatchJobInput {
  jobId: string;
  /** Input URL (file://, s3://, gs:// or a path): CSV with a header row, or JSONL. */
  input: string;
  /** Base output URL; the job writes under `<output>/<jobId>/`. */
  output: string;
  /** CSV column or JSONL field holding the value; found by its header (CRM spellings) when absent. */
  column?: string;
  /** The column holding each row's record id; found by its header (Id, Record ID, ...) when absent. */
  idColumn?: string;
  /** Columns carried into every output line as they are. */
  keepColumns?: string[];
  /** The input's text encoding (`--encoding`); found from the file when absent (activities/input/encoding.ts). */
  encoding?: InputEncoding;
  /** The sheet of an .xlsx input (`--sheet`); the first when absent. */
  sheet?: string;
  compression?: 'gzip' | 'none';
  /** Formats of the flat tables written beside the lines parts (docs/tables.md); none when absent. */
  formats?: OutputFormat[];
  /** Batches in flight at once (default DEFAULT_BATCH_CONCURRENCY, 16). */
  concurrency?: number;
  taskQueue?: string;
  apiTaskQueue?: string;
  /** Batches scheduled per workflow run before continue-as-new. */
  batchesPerRun?: number;
  /**
   * How long one of the job's activities may go without a heartbeat before Temporal gives it to another worker, i.e.
   * how soon the job notices a dead worker (default 10 s for API calls, 20 s for storage steps). The worker beats
   * every second; keep this several seconds above that.
   */
  heartbeatTimeoutMs?: number;
  /** Carried across continue-as-new; not for callers. */
  carried?: CarriedState;
}

/** A batched job that pays for signals (enrich, enrich-contacts): the filters every call sends, and its budget. */
export interface SignalJobInput<Options> extends BatchJobInput {
  /** Filters passed to the API for every company or contact (spec 4.2, 4.3). */
  options?: Options;
  /** No call is started that could take the job's credits over this; the job then ends `budget_exhausted`. */
  maxCredits?: number;
}

export interface CarriedState {
  prepared: PreparedInput;
  next: number;
  /** The next single batch to schedule (rows identified without a domain); absent once none are left. */
  singlesNext?: number;
  /** True once the single batches are done and their domains folded into the bulk batches. */
  folded?: boolean;
  totals: BatchTotals;
  startedAt: string;
}

export interface BatchJobSpec {
  kind: JobKind;
  batchSize: number;
  /** The options that change the job's answers: its parts record their hash (see JobRef.options). */
  options?: Record<string, unknown>;
  maxCredits?: number;
  /**
   * Runs batch `index`; `call` (the batch's summary in Temporal's UI) goes to the activity's `executeWithOptions`.
   * `folded`: single calls answered their rows first, and the domains they resolved are not to be paid again.
   */
  runBatch: (job: JobRef, index: number, call: ActivityOptions, folded: boolean) => Promise<BatchResult>;
  /** Runs a batch sending only the items that fit `creditCap` at their worst (see WindowOptions.capped). */
  runCappedBatch?: (
    job: JobRef,
    index: number,
    creditCap: number,
    call: ActivityOptions,
    folded: boolean,
  ) => Promise<BatchResult>;
  /**
   * Batches of rows identified without a domain, each answered by several paced single calls; they run before the
   * bulk batches so that the domains they resolve are folded in and paid once (`foldResolved`).
   */
  singles?: {
    run: (job: JobRef, index: number) => Promise<BatchResult>;
    runCapped: (job: JobRef, index: number, creditCap: number) => Promise<BatchResult>;
  };
  /**
   * False when single calls resolve nothing the bulk batches could reuse (contacts: every row is a single): the job
   * goes from its single batches straight to its duplicates and manifest.
   */
  foldSingles?: boolean;
  /** The most credits a batch of `size` items could cost. */
  worstCaseCredits: (size: number) => number;
  details: Record<string, unknown>;
  continueAsNew: (carried: CarriedState) => Promise<never>;
}

/** The single batches of a per-item activity (one paced call per row), every call sending the job's `options`. */
export function perItemSingles<Options>(
  activity: (request: PerItemBatchRequest<Options>) => Promise<BatchResult>,
  options: Options,
): NonNullable<BatchJobSpec['singles']> {
  return {
    run: (job, index) => activity({ job, index, options }),
    runCapped: (job, index, creditCap) => activity({ job, index, options, creditCap }),
  };
}

/** The stubs of a batch job's API activities, on the rate-limited API queue. */
export function batchApiActivities(input: BatchJobInput) {
  return proxyActivities<ApiActivities>(
    apiActivityOptions(input.apiTaskQueue ?? DEFAULT_API_TASK_QUEUE, undefined, input.heartbeatTimeoutMs),
  );
}

/**
 * The shape every batched job shares: prepare the input into batch files of `spec.batchSize` (once), run batches
 * through a sliding window under the credit budget, continue as new to keep history small, then write the manifest
 * last.
 */
export async function runBatchJob(input: BatchJobInput, spec: BatchJobSpec): Promise<JobResult> {
  const badJobId = jobIdProblem(input.jobId);
  if (badJobId) throw ApplicationFailure.nonRetryable(badJobId, FAILURE_TYPE.input);
  const run = openJobRun(input, spec);
  if (!run.prepared) {
    const finished = await prepareWhileRunning(run);
    if (finished) return finished;
  }
  // Rows without a domain first: each single call resolves a company, and its domain is then not paid again by a
  // bulk call (the fold). Their window runs once the whole input is prepared.
  let outcome: WindowOutcome | undefined;
  const plan = run.prepared;
  if (plan && singleBatches(run, plan) > 0 && !run.folded) {
    outcome = await runSinglesWindow(run, plan);
    if (outcome.fatal === undefined && !outcome.budgetExhausted) {
      if (outcome.next < singleBatches(run, plan)) return carryOn(run, plan, input.carried?.next ?? 0, outcome.next);
      if (spec.foldSingles !== false) await run.jobs.foldResolved({ job: run.job, prepared: plan });
      run.folded = true;
      outcome = undefined;
    }
  }
  outcome ??= await runBulkWindow(run);
  return carryOnOrFinish(run, outcome);
}

/** One run of a batch job, up to its continue-as-new: what its steps share. */
interface JobRun {
  readonly input: BatchJobInput;
  readonly spec: BatchJobSpec;
  readonly job: JobRef;
  readonly jobs: JobActivityProxy;
  readonly startedAt: string;
  readonly totals: BatchTotals;
  readonly concurrency: number;
  /** The whole input's plan once it is known (carried over, or prepared by this run). */
  prepared: PreparedInput | undefined;
  /** The whole input being prepared while the first window of batches runs. */
  preparing: Promise<PreparedInput> | undefined;
  /** The batches written before the whole input is prepared (the first window's). */
  startBatches: number;
  phase: JobProgress['status'];
  /** The single batches are done and their domains folded into the bulk batches. */
  folded: boolean;
  /** The job's progress where Temporal's web UI shows it (the workflow's current details). */
  showProgress: () => void;
}

/** The run's shared state, carried over or fresh, with its progress answered to the `progress` query. */
function openJobRun(input: BatchJobInput, spec: BatchJobSpec): JobRun {
  const run: JobRun = {
    input,
    spec,
    job: {
      jobId: input.jobId,
      kind: spec.kind,
      output: input.output,
      compression: input.compression ?? 'gzip',
      ...(input.formats?.length ? { formats: input.formats } : {}),
      ...(spec.options ? { options: spec.options } : {}),
    },
    jobs: proxyActivities<JobActivities>(
      storageActivityOptions(input.taskQueue ?? DEFAULT_TASK_QUEUE, input.heartbeatTimeoutMs),
    ),
    startedAt: input.carried?.startedAt ?? new Date().toISOString(),
    totals: input.carried?.totals ?? emptyTotals(),
    concurrency: Math.max(1, input.concurrency ?? DEFAULT_BATCH_CONCURRENCY),
    prepared: input.carried?.prepared,
    preparing: undefined,
    startBatches: 0,
    phase: input.carried?.prepared ? 'running' : 'preparing',
    folded: input.carried?.folded ?? false,
    showProgress: () => setCurrentDetails(progressDetails(progress())),
  };
  const progress = (): JobProgress => ({
    jobId: run.job.jobId,
    kind: run.job.kind,
    status: run.phase,
    batchesTotal: (run.prepared?.batches ?? 0) + (spec.singles ? (run.prepared?.singleBatches ?? 0) : 0),
    ...run.totals,
    rows: run.prepared?.rows ?? 0,
    distinct: run.prepared?.distinct ?? 0,
    invalid: run.prepared?.invalid ?? 0,
  });
  setHandler(progressQuery, progress);
  run.showProgress();
  return run;
}

/**
 * A job's first run: its result when an earlier job with the same id already finished; otherwise the first window's
 * batches are written and the whole input is prepared while they run. A large input takes seconds to prepare,
 * during which the account's budget would go unused.
 */
async function prepareWhileRunning(run: JobRun): Promise<JobResult | undefined> {
  const { input, spec, job, jobs } = run;
  const finished = await jobs.findFinishedJob({
    job,
    input: input.input,
    ...(input.column ? { column: input.column } : {}),
  });
  if (finished) return finished;
  const request = {
    job,
    input: input.input,
    column: input.column,
    ...(input.idColumn !== undefined ? { idColumn: input.idColumn } : {}),
    ...(input.keepColumns !== undefined ? { keepColumns: input.keepColumns } : {}),
    ...(input.encoding !== undefined ? { encoding: input.encoding } : {}),
    ...(input.sheet !== undefined ? { sheet: input.sheet } : {}),
    batchSize: spec.batchSize,
  };
  // Jobs started before the first window could run early prepared their whole input first: they replay that way.
  const start = patched(PREPARE_START_PATCH)
    ? await jobs.prepareInputStart({ ...request, batches: run.concurrency })
    : await jobs.prepareInput(request);
  if ('complete' in start) {
    run.startBatches = start.batches;
    run.preparing = jobs.prepareInput(request).then((whole) => {
      run.prepared = whole;
      run.phase = 'running';
      run.showProgress();
      return whole;
    });
  } else {
    run.prepared = start;
    run.phase = 'running';
  }
  run.showProgress();
  return undefined;
}

const singleBatches = (run: JobRun, plan: PreparedInput | undefined) =>
  run.spec.singles ? (plan?.singleBatches ?? 0) : 0;

/** The single batches' window: several paced single calls per batch, from where the last run stopped. */
function runSinglesWindow(run: JobRun, plan: PreparedInput): Promise<WindowOutcome> {
  const { spec, job } = run;
  const singles = spec.singles!;
  const perBatch = plan.singleBatchSize ?? 1;
  const singleSize = (index: number) =>
    index === singleBatches(run, plan) - 1 ? (plan.singles ?? 0) - index * perBatch : perBatch;
  return runWindow({
    from: run.input.carried?.singlesNext ?? 0,
    total: singleBatches(run, plan),
    concurrency: run.concurrency,
    limit: run.input.batchesPerRun ?? DEFAULT_BATCHES_PER_RUN,
    maxCredits: spec.maxCredits,
    worstCaseCredits: (index) => spec.worstCaseCredits(singleSize(index)),
    totals: run.totals,
    run: (index) => guarded(run, index, () => singles.run(job, index), 'single'),
    capped: {
      run: (index, creditCap) =>
        guarded(run, index, () => capped(() => singles.runCapped(job, index, creditCap)), 'single'),
      worstCaseItem: spec.worstCaseCredits(1),
    },
  });
}

/** The bulk batches' window, from where the last run stopped; it may start before the whole input is prepared. */
function runBulkWindow(run: JobRun): Promise<WindowOutcome> {
  const { spec, job } = run;
  const call = (index: number): ActivityOptions => ({
    summary: batchSummary(job, index, spec.batchSize, run.prepared),
  });
  /** Items of batch `index`: a full batch but for the input's last one (a full batch until that is known). */
  const sizeOf = (index: number) =>
    run.prepared && index === run.prepared.batches - 1
      ? run.prepared.distinct - (run.prepared.batches - 1) * run.prepared.batchSize
      : spec.batchSize;
  const startBatches = run.startBatches;
  return runWindow({
    from: run.input.carried?.next ?? 0,
    total: run.prepared?.batches ?? startBatches,
    // An input with rows to answer by single calls stops after its first bulk batches: the rest waits for the fold.
    ...(run.preparing
      ? {
          totalLater: run.preparing.then((whole) => (singleBatches(run, whole) > 0 ? startBatches : whole.batches)),
        }
      : {}),
    concurrency: run.concurrency,
    limit: run.input.batchesPerRun ?? DEFAULT_BATCHES_PER_RUN,
    maxCredits: spec.maxCredits,
    worstCaseCredits: (index) => spec.worstCaseCredits(sizeOf(index)),
    totals: run.totals,
    onSettled: run.showProgress,
    run: (index) => guarded(run, index, () => spec.runBatch(job, index, call(index), run.folded)),
    ...(spec.runCappedBatch
      ? {
          capped: {
            run: (index: number, creditCap: number) =>
              guarded(run, index, () =>
                capped(() => spec.runCappedBatch!(job, index, creditCap, call(index), run.folded)),
              ),
            worstCaseItem: spec.worstCaseCredits(1),
          },
        }
      : {}),
  });
}

/** A batch whose retries are spent: its rows become error records and a re-run of the job retries it. */
async function guarded(
  run: JobRun,
  index: number,
  attempt: () => Promise<BatchResult>,
  series?: 'single',
): Promise<BatchResult> {
  try {
    return await attempt();
  } catch (error) {
    if (isFatalFailure(error)) throw error;
    return run.jobs.recordFailedBatch({
      job: run.job,
      index,
      message: failureMessage(error),
      ...(series ? { series } : {}),
    });
  }
}

/** One capped call after another (each on the rate-limited queue) until the batch is done or nothing fits. */
async function capped(call: () => Promise<BatchResult>): Promise<BatchResult> {
  for (;;) {
    const result = await call();
    if (!result.partial || result.reused) return result;
  }
}

/** Continues as new with the plan and the batch (and single batch) to go on from. */
function carryOn(run: JobRun, plan: PreparedInput, next: number, singlesNext?: number): Promise<JobResult> {
  return run.spec.continueAsNew({
    prepared: plan,
    next,
    totals: run.totals,
    startedAt: run.startedAt,
    ...(singlesNext !== undefined ? { singlesNext } : {}),
    ...(run.folded ? { folded: run.folded } : {}),
  });
}

/** After the window: continue as new while batches are left, else answer the duplicates and finalize the job. */
async function carryOnOrFinish(run: JobRun, outcome: WindowOutcome): Promise<JobResult> {
  const { input, spec, job, jobs } = run;
  // Settled by now unless the run stopped early (its batch limit, a fatal failure): it carries the whole plan.
  const plan = run.prepared ?? (await run.preparing?.catch(() => undefined));
  if (plan && outcome.fatal === undefined && !outcome.budgetExhausted) {
    if (singleBatches(run, plan) > 0 && !run.folded) return carryOn(run, plan, outcome.next, 0);
    if (outcome.next < plan.batches) return carryOn(run, plan, outcome.next);
  }
  // Every row repeating another's identifier gets its line, answered from the line it repeats (no API call).
  if (plan?.duplicateFiles && outcome.fatal === undefined) await jobs.answerDuplicates({ job });

  const details = { ...spec.details, max_credits: spec.maxCredits ?? null };
  return finishRun(
    outcome,
    run.totals,
    `job ${job.jobId}`,
    (phase) => {
      run.phase = phase;
      run.showProgress();
    },
    (ending) =>
      jobs.finalizeJob({
        job,
        input: input.input,
        startedAt: run.startedAt,
        ...(plan ? { prepared: plan } : {}),
        ...ending,
        details,
      }),
  );
}
