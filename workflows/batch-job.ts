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
  const job: JobRef = {
    jobId: input.jobId,
    kind: spec.kind,
    output: input.output,
    compression: input.compression ?? 'gzip',
    ...(input.formats?.length ? { formats: input.formats } : {}),
    ...(spec.options ? { options: spec.options } : {}),
  };
  const jobs = proxyActivities<JobActivities>(
    storageActivityOptions(input.taskQueue ?? DEFAULT_TASK_QUEUE, input.heartbeatTimeoutMs),
  );
  const startedAt = input.carried?.startedAt ?? new Date().toISOString();
  const totals = input.carried?.totals ?? emptyTotals();
  let prepared = input.carried?.prepared;
  let phase: JobProgress['status'] = prepared ? 'running' : 'preparing';

  const progress = (): JobProgress => ({
    jobId: job.jobId,
    kind: job.kind,
    status: phase,
    batchesTotal: (prepared?.batches ?? 0) + (spec.singles ? (prepared?.singleBatches ?? 0) : 0),
    ...totals,
    rows: prepared?.rows ?? 0,
    distinct: prepared?.distinct ?? 0,
    invalid: prepared?.invalid ?? 0,
  });
  setHandler(progressQuery, progress);
  /** The job's progress where Temporal's web UI shows it (the workflow's current details). */
  const showProgress = () => setCurrentDetails(progressDetails(progress()));
  showProgress();

  const concurrency = Math.max(1, input.concurrency ?? DEFAULT_BATCH_CONCURRENCY);
  // A large input takes seconds to prepare, during which the account's budget would go unused: the job's first
  // window of batches is written first and runs while the whole input is prepared (the same batch files).
  let preparing: Promise<PreparedInput> | undefined;
  let startBatches = 0;
  if (!prepared) {
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
      ? await jobs.prepareInputStart({ ...request, batches: concurrency })
      : await jobs.prepareInput(request);
    if ('complete' in start) {
      startBatches = start.batches;
      preparing = jobs.prepareInput(request).then((whole) => {
        prepared = whole;
        phase = 'running';
        showProgress();
        return whole;
      });
    } else {
      prepared = start;
      phase = 'running';
    }
    showProgress();
  }
  const call = (index: number): ActivityOptions => ({
    summary: batchSummary(job, index, spec.batchSize, prepared),
  });
  /** Items of batch `index`: a full batch but for the input's last one (a full batch until that is known). */
  const sizeOf = (index: number) =>
    prepared && index === prepared.batches - 1
      ? prepared.distinct - (prepared.batches - 1) * prepared.batchSize
      : spec.batchSize;
  const singleBatches = (plan: PreparedInput | undefined) => (spec.singles ? (plan?.singleBatches ?? 0) : 0);
  let folded = input.carried?.folded ?? false;
  const carriedOn = (plan: PreparedInput, next: number, singlesNext?: number) =>
    spec.continueAsNew({
      prepared: plan,
      next,
      totals,
      startedAt,
      ...(singlesNext !== undefined ? { singlesNext } : {}),
      ...(folded ? { folded } : {}),
    });

  // Rows without a domain first: each single call resolves a company, and its domain is then not paid again by a
  // bulk call (the fold). Their window runs once the whole input is prepared.
  let outcome: WindowOutcome | undefined;
  if (prepared && singleBatches(prepared) > 0 && !folded) {
    const plan = prepared;
    const singles = spec.singles!;
    const perBatch = plan.singleBatchSize ?? 1;
    const singleSize = (index: number) =>
      index === singleBatches(plan) - 1 ? (plan.singles ?? 0) - index * perBatch : perBatch;
    outcome = await runWindow({
      from: input.carried?.singlesNext ?? 0,
      total: singleBatches(plan),
      concurrency,
      limit: input.batchesPerRun ?? DEFAULT_BATCHES_PER_RUN,
      maxCredits: spec.maxCredits,
      worstCaseCredits: (index) => spec.worstCaseCredits(singleSize(index)),
      totals,
      run: (index) => guarded(index, () => singles.run(job, index), 'single'),
      capped: {
        run: (index, creditCap) =>
          guarded(index, () => capped(() => singles.runCapped(job, index, creditCap)), 'single'),
        worstCaseItem: spec.worstCaseCredits(1),
      },
    });
    if (outcome.fatal === undefined && !outcome.budgetExhausted) {
      if (outcome.next < singleBatches(plan)) return carriedOn(plan, input.carried?.next ?? 0, outcome.next);
      if (spec.foldSingles !== false) await jobs.foldResolved({ job, prepared: plan });
      folded = true;
      outcome = undefined;
    }
  }

  outcome ??= await runWindow({
    from: input.carried?.next ?? 0,
    total: prepared?.batches ?? startBatches,
    // An input with rows to answer by single calls stops after its first bulk batches: the rest waits for the fold.
    ...(preparing
      ? { totalLater: preparing.then((whole) => (singleBatches(whole) > 0 ? startBatches : whole.batches)) }
      : {}),
    concurrency,
    limit: input.batchesPerRun ?? DEFAULT_BATCHES_PER_RUN,
    maxCredits: spec.maxCredits,
    worstCaseCredits: (index) => spec.worstCaseCredits(sizeOf(index)),
    totals,
    onSettled: showProgress,
    run: (index) => guarded(index, () => spec.runBatch(job, index, call(index), folded)),
    ...(spec.runCappedBatch
      ? {
          capped: {
            run: (index: number, creditCap: number) =>
              guarded(index, () => capped(() => spec.runCappedBatch!(job, index, creditCap, call(index), folded))),
            worstCaseItem: spec.worstCaseCredits(1),
          },
        }
      : {}),
  });

  async function guarded(index: number, attempt: () => Promise<BatchResult>, series?: 'single'): Promise<BatchResult> {
    try {
      return await attempt();
    } catch (error) {
      if (isFatalFailure(error)) throw error;
      // Retries are spent: the batch's rows become error records and a re-run of the job retries it.
      return jobs.recordFailedBatch({ job, index, message: failureMessage(error), ...(series ? { series } : {}) });
    }
  }

  /** One capped call after another (each on the rate-limited queue) until the batch is done or nothing fits. */
  async function capped(run: () => Promise<BatchResult>): Promise<BatchResult> {
    for (;;) {
      const result = await run();
      if (!result.partial || result.reused) return result;
    }
  }

  // Settled by now unless the run stopped early (its batch limit, a fatal failure): it carries the whole plan.
  const plan = prepared ?? (await preparing?.catch(() => undefined));
  if (plan && outcome.fatal === undefined && !outcome.budgetExhausted) {
    if (singleBatches(plan) > 0 && !folded) return carriedOn(plan, outcome.next, 0);
    if (outcome.next < plan.batches) return carriedOn(plan, outcome.next);
  }
  // Every row repeating another's identifier gets its line, answered from the line it repeats (no API call).
  if (plan?.duplicateFiles && outcome.fatal === undefined) await jobs.answerDuplicates({ job });

  const details = { ...spec.details, max_credits: spec.maxCredits ?? null };
  return finishRun(
    outcome,
    totals,
    `job ${job.jobId}`,
    (p) => {
      phase = p;
      showProgress();
    },
    (ending) =>
      jobs.finalizeJob({ job, input: input.input, startedAt, ...(plan ? { prepared: plan } : {}), ...ending, details }),
  );
}
