/**
 * The kit's own metrics, recorded through the Temporal runtime's meter so that they leave the process by the same
 * exporter as Temporal's (Prometheus `/metrics`, or OpenTelemetry). Fed from two places of the worker:
 *
 * - the API client's HTTP dispatcher: every answer of the service (calls by status, credits from
 *   `x-credits-charged`, 429s and the `Retry-After` they asked for), and the time each call waited for its slot
 *   from the account's rate limiter;
 * - an activity interceptor: what each activity published (rows and signals written, failed batches, webhook
 *   deliveries by outcome, dead-lettered events). Results of parts that already existed are not counted again.
 */

import type { MetricMeter } from '@temporalio/common';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { type Dispatcher, getGlobalDispatcher } from 'undici';
import { parseRetryAfter } from '../connectors/retry-after.ts';

export const METRIC = {
  apiCalls: 'signal_kit_api_calls',
  credits: 'signal_kit_credits_charged',
  rateLimited: 'signal_kit_api_rate_limited',
  rateLimitWait: 'signal_kit_rate_limit_wait_milliseconds',
  rowsWritten: 'signal_kit_rows_written',
  signalsWritten: 'signal_kit_signals_written',
  batchesFailed: 'signal_kit_batches_failed',
  webhookDeliveries: 'signal_kit_webhook_deliveries',
  deadLettered: 'signal_kit_webhook_dead_lettered',
} as const;

/** Each metric's unit and description, as the exporter shows them. */
const METRIC_HELP: Record<keyof typeof METRIC, [unit: string, description: string]> = {
  apiCalls: ['calls', 'Answers of the Signal API by HTTP status ("error": none came)'],
  credits: ['credits', 'Credits the Signal API charged (x-credits-charged)'],
  rateLimited: ['calls', '429 answers of the Signal API'],
  rateLimitWait: [
    'ms',
    'Time API calls waited on the rate limit: for a slot of the account limiter (reason="slot"), or the Retry-After of a 429 (reason="retry_after")',
  ],
  rowsWritten: ['rows', 'Output lines published in parts, by job kind'],
  signalsWritten: ['signals', 'Signals published in output lines, by job kind'],
  batchesFailed: ['batches', 'Batches published as error records after all retries'],
  webhookDeliveries: ['deliveries', 'Webhook delivery attempts by outcome'],
  deadLettered: ['events', 'Webhook events written to the dead-letter location'],
};

export type KitMetrics = ReturnType<typeof createKitMetrics>;

export function createKitMetrics(meter: MetricMeter) {
  const counter = (key: keyof typeof METRIC) => meter.createCounter(METRIC[key], ...METRIC_HELP[key]);
  const apiCalls = counter('apiCalls');
  const credits = counter('credits');
  const rateLimited = counter('rateLimited');
  const rateLimitWait = counter('rateLimitWait');
  const rows = counter('rowsWritten');
  const signals = counter('signalsWritten');
  const batchesFailed = counter('batchesFailed');
  const deliveries = counter('webhookDeliveries');
  const deadLettered = counter('deadLettered');
  return {
    apiAnswer(status: number | 'error', headers: Record<string, string | string[] | undefined> = {}) {
      apiCalls.add(1, { status: String(status) });
      const charged = Number(first(headers['x-credits-charged']));
      if (Number.isFinite(charged) && charged > 0) credits.add(charged);
      if (status === 429) {
        rateLimited.add(1);
        // Runtime counters hold integers: milliseconds keep short waits visible (capped as the kit waits them).
        const wait = parseRetryAfter(headers['retry-after']) ?? 0;
        if (wait > 0) rateLimitWait.add(wait, { reason: 'retry_after' });
      }
    },
    slotWait: (ms: number) => Math.round(ms) > 0 && rateLimitWait.add(Math.round(ms), { reason: 'slot' }),
    rowsWritten: (count: number, job: string) => count > 0 && rows.add(count, { job }),
    signalsWritten: (count: number, job: string) => count > 0 && signals.add(count, { job }),
    batchFailed: (job: string) => batchesFailed.add(1, { job }),
    webhookDelivery: (outcome: string) => deliveries.add(1, { outcome }),
    deadLettered: () => deadLettered.add(1),
  };
}

function first(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** Passes every callback through, recording the answer's status and headers (or the failure) once. */
class MeteringHandler implements Dispatcher.DispatchHandler {
  readonly #handler: Dispatcher.DispatchHandler;
  readonly #metrics: KitMetrics;
  #recorded = false;
  constructor(handler: Dispatcher.DispatchHandler, metrics: KitMetrics) {
    this.#handler = handler;
    this.#metrics = metrics;
  }
  onRequestStart(controller: Dispatcher.DispatchController, context: unknown): void {
    this.#handler.onRequestStart?.(controller, context);
  }
  onRequestUpgrade(...args: Parameters<NonNullable<Dispatcher.DispatchHandler['onRequestUpgrade']>>): void {
    this.#handler.onRequestUpgrade?.(...args);
  }
  onResponseStart(
    controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: Record<string, string | string[] | undefined>,
    statusMessage?: string,
  ): void {
    if (statusCode >= 200 && !this.#recorded) {
      this.#recorded = true;
      this.#metrics.apiAnswer(statusCode, headers);
    }
    this.#handler.onResponseStart?.(controller, statusCode, headers, statusMessage);
  }
  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.#handler.onResponseData?.(controller, chunk);
  }
  onResponseEnd(
    controller: Dispatcher.DispatchController,
    trailers: Record<string, string | string[] | undefined>,
  ): void {
    this.#handler.onResponseEnd?.(controller, trailers);
  }
  onResponseError(controller: Dispatcher.DispatchController, error: Error): void {
    if (!this.#recorded) {
      this.#recorded = true;
      this.#metrics.apiAnswer('error');
    }
    this.#handler.onResponseError?.(controller, error);
  }
}

/** A dispatcher for the API client that records every answer in `metrics`. */
export function meteredDispatcher(metrics: KitMetrics, base: Dispatcher = getGlobalDispatcher()): Dispatcher {
  return base.compose((dispatch) => (options, handler) => dispatch(options, new MeteringHandler(handler, metrics)));
}

interface BatchLike {
  reused: boolean;
  failed: boolean;
  counts: { lines: number };
}

const isBatch = (value: unknown): value is BatchLike =>
  typeof value === 'object' &&
  value !== null &&
  typeof (value as BatchLike).reused === 'boolean' &&
  typeof (value as BatchLike).counts?.lines === 'number';

/** The job an activity works for, from its request: a batch job's id, or a push run's name and run id. */
export function jobIdOf(request: unknown): string | undefined {
  if (typeof request !== 'object' || request === null) return undefined;
  const r = request as { job?: { jobId?: unknown }; run?: { name?: unknown; runId?: unknown } };
  if (typeof r.job?.jobId === 'string') return r.job.jobId;
  if (typeof r.run?.name === 'string' && typeof r.run.runId === 'string') return `${r.run.name}/${r.run.runId}`;
  return undefined;
}

const JOB_OF_ACTIVITY: Record<string, string> = {
  enrichBatch: 'enrich',
  verifyBatch: 'verify-emails',
  downloadIntentExport: 'intent-export',
  fetchPushBatch: 'push',
  recoverKeptPushAnswers: 'push',
  recordFailedBatch: 'batch',
  recordFailedPushBatch: 'push',
};

/**
 * Counts what each activity published, and gives its log lines the job id (and, for webhook activities, the signal
 * id). One INFO line per published batch tells an operator where a job is without any debug logging.
 */
export function telemetryInterceptor(metrics: KitMetrics): ActivityInterceptorsFactory {
  return (ctx) => {
    const type = ctx.info.activityType;
    let jobId: string | undefined;
    let signalId: string | undefined;
    return {
      inbound: {
        async execute(input, next) {
          const request = input.args[0];
          jobId = jobIdOf(request);
          const event = (request as { event?: { signal?: { id?: unknown } } } | undefined)?.event;
          if (typeof event?.signal?.id === 'string') signalId = event.signal.id;
          let result: unknown;
          try {
            result = await next(input);
          } catch (error) {
            if (type === 'deliverToEndpoint') metrics.webhookDelivery('failed');
            throw error;
          }
          record(type, result);
          return result;
        },
      },
      outbound: {
        getLogAttributes: (attributes, next) =>
          next({ ...attributes, ...(jobId ? { jobId } : {}), ...(signalId ? { signalId } : {}) }),
      },
    };

    function record(activity: string, result: unknown): void {
      const job = JOB_OF_ACTIVITY[activity];
      if (job && isBatch(result)) {
        if (!result.reused) metrics.rowsWritten(result.counts.lines, job);
        // A push writes one line per signal; enrich reports the signals inside its lines.
        const signals = activity === 'fetchPushBatch' ? result.counts.lines : (result as { signals?: number }).signals;
        if (!result.reused && signals) metrics.signalsWritten(signals, job);
        if (result.failed) metrics.batchFailed(job);
        if (!result.reused || result.failed) {
          ctx.log.info(result.failed ? 'batch failed, written as error records' : 'batch written', {
            batch: (result as { index?: number }).index,
            lines: result.counts.lines,
            credits: (result.counts as { credits?: number }).credits,
          });
        }
      } else if (activity === 'downloadIntentExport' && typeof (result as { lines?: unknown })?.lines === 'number') {
        metrics.rowsWritten((result as { lines: number }).lines, 'intent-export');
      } else if (activity === 'deliverToEndpoint') {
        metrics.webhookDelivery(String((result as { outcome?: unknown })?.outcome ?? 'delivered'));
      } else if (activity === 'writeDeadLetter') {
        metrics.deadLettered();
        ctx.log.warn('event dead-lettered', { url: (result as { url?: string })?.url });
      }
    }
  };
}
