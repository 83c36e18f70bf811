import {
  allHandlersFinished,
  condition,
  continueAsNew,
  defineQuery,
  defineUpdate,
  makeContinueAsNewFunc,
  setHandler,
  setWorkflowOptions,
  workflowInfo,
} from '@temporalio/workflow';
import {
  grantSlots,
  MAX_LEAD_MS,
  MAX_SLOTS_PER_REQUEST,
  type Schedule,
  type SlotGrant,
} from './rate-limiter-schedule.ts';

/**
 * The account's request budget, shared by every worker process and every job: one long-lived workflow per API task
 * queue hands out evenly spaced call slots through an update, and each process waits for its slot before it sends
 * a request (workers/rate-limiter-permits.ts).
 *
 * Why not the task queue's own rate limit: Temporal divides it among the queue's partitions (4 by default), and a
 * partition with no task waiting when it may dispatch loses its share, so a queue limited to 300/min dispatched
 * 260 or so. The division applies to a limit set through the task queue configuration API too.
 */

export interface SlotRequest {
  /** Slots wanted now (one per call waiting in the asking process). */
  count: number;
  /** The account's budget per minute, as the asking worker is configured. */
  perMinute: number;
  /** The service's rate window (SIGNAL_API_RATE_WINDOW_MS); a minute when absent. */
  windowMs?: number;
  /** How long the asking process's last grant took to reach it: a slot granted now is put off by about as much. */
  leadMs?: number;
}

export const reserveSlotsUpdate = defineUpdate<SlotGrant, [SlotRequest]>('reserveSlots');

/** Slots granted since the limiter (this chain of runs) started: one per API call sent through it. */
export const slotsGrantedQuery = defineQuery<number>('slotsGranted');

export interface ApiRateLimiterInput {
  /** Carried across continue-as-new: the next slot not yet granted, and the slots granted so far. */
  nextAt?: number;
  granted?: number;
}

/** The workflow ID of the limiter of an API task queue (one per account and namespace). */
export function apiRateLimiterId(apiTaskQueue: string): string {
  return `signal-kit-rate-limiter/${apiTaskQueue}`;
}

/** A run ends after this long without a request; the next request starts a new one. */
const IDLE_END_MS = 10 * 60_000;
/** Requests per run before continuing as new (each costs five history events; the server may suggest it earlier). */
const GRANTS_PER_RUN = 1_000;

export async function apiRateLimiter(input: ApiRateLimiterInput = {}): Promise<void> {
  const schedule: Schedule = { nextAt: input.nextAt ?? 0 };
  let granted = input.granted ?? 0;
  let requests = 0;
  setHandler(slotsGrantedQuery, () => granted);
  setHandler(
    reserveSlotsUpdate,
    (request) => {
      requests += 1;
      const grant = grantSlots(
        schedule,
        Date.now(),
        request.count,
        request.perMinute,
        request.windowMs,
        request.leadMs,
      );
      granted += grant.waitsMs.length;
      return grant;
    },
    {
      validator: (request) => {
        if (!Number.isInteger(request.count) || request.count < 1 || request.count > MAX_SLOTS_PER_REQUEST) {
          throw new RangeError(`count must be an integer from 1 to ${MAX_SLOTS_PER_REQUEST}`);
        }
        if (!(request.perMinute > 0 && Number.isFinite(request.perMinute))) {
          throw new RangeError('perMinute must be a positive number');
        }
        if (request.leadMs !== undefined && !(request.leadMs >= 0 && request.leadMs <= MAX_LEAD_MS)) {
          throw new RangeError(`leadMs must be a number from 0 to ${MAX_LEAD_MS}`);
        }
      },
    },
  );
  // A run begun without versioning records no behavior, and a versioned worker that takes it over later (versioning
  // turned on) completes its tasks with that worker's default, pinned: the run would stay on that build after the
  // next deploy. It continues as new there instead, and the next run starts (auto-upgrade) where the current version is.
  const startedVersioned = versioned();
  const mustMove = () => !startedVersioned && versioned();
  for (;;) {
    const seen = requests;
    const active = await condition(() => requests !== seen, IDLE_END_MS);
    if (!active || requests >= GRANTS_PER_RUN || workflowInfo().continueAsNewSuggested || mustMove()) break;
  }
  await condition(allHandlersFinished);
  if (requests >= GRANTS_PER_RUN || workflowInfo().continueAsNewSuggested || mustMove()) {
    const carried: ApiRateLimiterInput = { nextAt: schedule.nextAt, granted };
    if (versioned()) {
      await makeContinueAsNewFunc<typeof apiRateLimiter>({ initialVersioningBehavior: 'AUTO_UPGRADE' })(carried);
    }
    await continueAsNew<typeof apiRateLimiter>(carried);
  }
}

/** Whether the current workflow task runs on a worker of a Worker Deployment. */
function versioned(): boolean {
  return Boolean(workflowInfo().currentDeploymentVersion?.deploymentName);
}

// Under Worker Deployment versioning the limiter, which outlives any deploy, moves to the current version at its next
// task: pinned, it would keep the old version from draining and stop every API call once the old workers are gone.
// Unversioned workers refuse a versioning behavior (they run with an unnamed deployment), hence the condition.
setWorkflowOptions(() => (versioned() ? { versioningBehavior: 'AUTO_UPGRADE' } : {}), apiRateLimiter);
