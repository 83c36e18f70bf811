import { setTimeout as sleep } from 'node:timers/promises';
import { type Client, type WorkflowHandle, WorkflowNotFoundError } from '@temporalio/client';
import { RateLimiterUnavailableError } from '../connectors/errors.ts';
import type { SendCheck } from '../connectors/signal-api/http.ts';
import { apiRateLimiter, apiRateLimiterId, reserveSlotsUpdate } from '../workflows/rate-limiter.ts';
import {
  MAX_LEAD_MS,
  MAX_SLOTS_PER_REQUEST,
  SEND_LATENESS_MS,
  type SlotGrant,
  slotIntervalMs,
} from '../workflows/rate-limiter-schedule.ts';

export interface RateLimiterPermitsOptions {
  client: Client;
  /** The queue the limiter workflow runs on (the kit's main queue). */
  taskQueue: string;
  /** The API task queue: one limiter per API queue, i.e. per account. */
  apiTaskQueue: string;
  /** The account's budget per minute. */
  perMinute: number;
  /** The service's rate window; a minute when absent. */
  windowMs?: number;
}

interface Waiter {
  resolve: (waitMs: number) => void;
  reject: (error: unknown) => void;
}

/** How late after its time a slot may still be used: the part of the limiter's guard kept for late sends. */
const STALE_SLOT_MS = SEND_LATENESS_MS;

/** Attempts of one reservation before the waiting calls fail (the activity is then retried by Temporal). */
export const RESERVE_ATTEMPTS = 5;

/** How long one request for slots may wait for the limiter (it answers in milliseconds when a worker runs it). */
const UPDATE_DEADLINE_MS = 10_000;

// Enum values of temporal.api.enums.v1 (@temporalio/proto is not a direct dependency).
const VERSIONING_BEHAVIOR_PINNED = 1;
const TASK_QUEUE_KIND_NORMAL = 1;
const TASK_QUEUE_TYPE_WORKFLOW = 1;

/**
 * A worker process's side of the account's rate limiter (workflows/rate-limiter.ts): `acquire()` resolves when
 * the caller may send one API request. Calls that wait at the same time share one update to the limiter, so the
 * cost is at most one round trip per batch of waiting calls, not one per call. Plain updates and starts only: any
 * Temporal server with workflow updates (1.25 and later, Temporal Cloud) runs it without configuration.
 */
export class RateLimiterPermits {
  readonly #options: RateLimiterPermitsOptions;
  readonly #waiting: Waiter[] = [];
  #busy = false;
  #lastSentAt = Number.NEGATIVE_INFINITY;
  /** How late a grant reaches this process after the limiter's `now` (recent worst, decaying): the next lead. */
  #arrivalMs = 0;
  /** Slot times of this process's calls waiting for their slot, and who waits for the next of them to leave. */
  readonly #due = new Set<number>();
  #onLeave: (() => void)[] = [];

  constructor(options: RateLimiterPermitsOptions) {
    this.#options = options;
  }

  /**
   * Resolves when the caller may send one API request, with a check of whether it still may: a call held after its
   * slot (its marker's write took long) for more than the lateness the limiter allows asks for another slot.
   */
  readonly acquire = async (signal?: AbortSignal): Promise<SendCheck> => {
    const options = signal ? { signal } : undefined;
    const interval = slotIntervalMs(this.#options.perMinute, this.#options.windowMs);
    for (;;) {
      // The slot's time on the wall clock (the limiter's `now` plus its wait).
      const slotAt = await new Promise<number>((resolve, reject) => {
        this.#waiting.push({ resolve, reject });
        this.#pump();
      });
      this.#due.add(slotAt);
      try {
        if (await this.#waitForSlot(slotAt, interval, options)) return () => Date.now() - slotAt <= STALE_SLOT_MS;
      } finally {
        this.#due.delete(slotAt);
        // After the request has been handed to the socket (it is written in this turn of the event loop).
        const leaving = this.#onLeave.splice(0);
        if (leaving.length > 0) {
          setImmediate(() => {
            for (const leave of leaving) leave();
          });
        }
      }
    }
  };

  /**
   * Resolves before work that holds the event loop for a while (parsing a large answer): when one of this
   * process's calls is due within about an interval, after that call has left. A timer cannot fire while the loop
   * is busy, and a call held past its slot is given up: its slot is lost to the whole account.
   */
  readonly beforeBusyWork = async (): Promise<void> => {
    const soon = Date.now() + slotIntervalMs(this.#options.perMinute, this.#options.windowMs);
    for (const at of this.#due) {
      if (at <= soon) {
        await new Promise<void>((resolve) => this.#onLeave.push(resolve));
        return;
      }
    }
  };

  /** Waits for a granted slot; true when the call may leave, false when the slot went stale. */
  async #waitForSlot(slotAt: number, interval: number, options?: { signal: AbortSignal }): Promise<boolean> {
    const waitMs = slotAt - Date.now();
    if (waitMs > 0) await sleep(waitMs, undefined, options);
    // Slots whose timers fired together (the event loop was busy parsing an answer) do not leave as a burst: a
    // process's calls stay an interval less STALE_SLOT_MS apart. Not a whole interval: a call sent late would then
    // push the process's next call late by as much, and so on until one went stale and its slot was lost. The
    // window is safe without more, since every call leaves within STALE_SLOT_MS of its slot.
    for (;;) {
      const gap = this.#lastSentAt + interval - STALE_SLOT_MS - performance.now();
      if (gap <= 0) break;
      await sleep(gap, undefined, options);
    }
    // A slot used much later than its time could meet the next slots in one window: it is given up (it only
    // costs a little speed) and another is asked for.
    if (Date.now() - slotAt <= STALE_SLOT_MS) {
      this.#lastSentAt = performance.now();
      return true;
    }
    return false;
  }

  /**
   * Starts the account's limiter unless one runs, so that the first call does not wait for it to start (a fresh run
   * costs a start and its first workflow task, over a second on a loaded machine). Failures are left to the first
   * call to meet.
   */
  async warmUp(): Promise<void> {
    const { client, taskQueue, apiTaskQueue } = this.#options;
    await client.workflow
      .start(apiRateLimiter, {
        workflowId: apiRateLimiterId(apiTaskQueue),
        taskQueue,
        args: [{}],
        workflowIdConflictPolicy: 'USE_EXISTING',
      })
      .catch(() => {});
  }

  #pump(): void {
    if (this.#busy || this.#waiting.length === 0) return;
    this.#busy = true;
    const batch = this.#waiting.splice(0, MAX_SLOTS_PER_REQUEST);
    void this.#reserve(batch.length).then(
      (grant) => {
        const base = grant.grantedAt ?? Date.now();
        // Up at once, down slowly: a lead too short costs a stale slot and another round trip, one too long only
        // delays the first call after a quiet spell by as much.
        const arrival = Math.max(0, Date.now() - base);
        this.#arrivalMs = arrival > this.#arrivalMs ? arrival : 0.7 * this.#arrivalMs + 0.3 * arrival;
        for (const [i, waitMs] of grant.waitsMs.entries()) batch[i]?.resolve(base + waitMs);
        const rest = batch.slice(grant.waitsMs.length);
        if (rest.length === 0) {
          this.#next();
          return;
        }
        // The limiter's horizon is full: the rest ask again when it has moved on, ahead of later callers.
        setTimeout(() => {
          this.#waiting.unshift(...rest);
          this.#next();
        }, grant.retryInMs ?? 1000);
      },
      (error: unknown) => {
        for (const waiter of batch) waiter.reject(error);
        this.#next();
      },
    );
  }

  #next(): void {
    this.#busy = false;
    this.#pump();
  }

  async #reserve(count: number): Promise<SlotGrant> {
    const { client, apiTaskQueue, perMinute, windowMs } = this.#options;
    const workflowId = apiRateLimiterId(apiTaskQueue);
    for (let attempt = 1; ; attempt++) {
      try {
        const request = {
          count,
          perMinute,
          ...(windowMs ? { windowMs } : {}),
          leadMs: Math.min(Math.round(this.#arrivalMs), MAX_LEAD_MS),
        };
        // Bounded: the client asks again and again while no worker takes the update (the limiter pinned to a build
        // whose workers are gone, or no worker on its queue).
        return await client.withDeadline(Date.now() + UPDATE_DEADLINE_MS, () =>
          client.workflow.getHandle(workflowId).executeUpdate(reserveSlotsUpdate, { args: [request] }),
        );
      } catch (error) {
        // No limiter running (the first call, or the last run ended idle or is continuing as new): start one; a
        // process that starts it at the same moment joins the same run.
        if (error instanceof WorkflowNotFoundError) {
          if (attempt >= RESERVE_ATTEMPTS) throw error;
          await this.warmUp();
          continue;
        }
        // Unanswered: the limiter may be pinned to a build whose workers are gone. It is moved to the current
        // version; when no worker at all can run it, the calls fail now, saying why, instead of waiting on.
        const unserved = await this.followRollouts()
          .then(() => this.#unservedReason())
          .catch(() => undefined);
        if (unserved || attempt >= RESERVE_ATTEMPTS) {
          throw new RateLimiterUnavailableError(workflowId, unserved ?? errorMessage(error), { cause: error });
        }
        await sleep(100 * 2 ** attempt);
      }
    }
  }

  /**
   * Makes the account's limiter follow every rollout: a run pinned to a build (started there, or moved there when
   * versioning was turned on while it ran) is set to auto-upgrade, so its next task runs on the deployment's
   * current version and a build whose workers are gone never holds it. Resolves whether it changed anything.
   */
  async followRollouts(): Promise<boolean> {
    const { client, apiTaskQueue } = this.#options;
    const workflowId = apiRateLimiterId(apiTaskQueue);
    let info: Awaited<ReturnType<WorkflowHandle['describe']>>;
    try {
      info = await client.workflow.getHandle(workflowId).describe();
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) return false;
      throw error;
    }
    if (info.status.name !== 'RUNNING') return false;
    const versioning = info.raw.workflowExecutionInfo?.versioningInfo;
    const override = versioning?.versioningOverride;
    const pinned =
      override?.pinned != null ||
      override?.behavior === VERSIONING_BEHAVIOR_PINNED ||
      (!override?.autoUpgrade && versioning?.behavior === VERSIONING_BEHAVIOR_PINNED);
    if (!pinned) return false;
    await client.workflowService.updateWorkflowExecutionOptions({
      namespace: client.options.namespace,
      workflowExecution: { workflowId },
      workflowExecutionOptions: { versioningOverride: { autoUpgrade: true } },
      updateMask: { paths: ['versioning_override'] },
    });
    return true;
  }

  /** Why no worker can run the limiter's tasks, or undefined when one can (or it cannot be told). */
  async #unservedReason(): Promise<string | undefined> {
    const { client, taskQueue } = this.#options;
    const answer = await client.workflowService.describeTaskQueue({
      namespace: client.options.namespace,
      taskQueue: { name: taskQueue, kind: TASK_QUEUE_KIND_NORMAL },
      taskQueueType: TASK_QUEUE_TYPE_WORKFLOW,
    });
    if ((answer.pollers?.length ?? 0) > 0) return undefined;
    return (
      `no worker polls task queue "${taskQueue}", where it runs: start \`signal-kit worker\` ` +
      '(same SIGNAL_KIT_TASK_QUEUE and Temporal settings)'
    );
  }
}

function errorMessage(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  return error.message || `${error.name} (no answer in ${UPDATE_DEADLINE_MS / 1000} s)`;
}
