import type { ScheduleOverlapPolicy } from '@temporalio/client';
import type { FeedResult } from '../../activities/feeds/types.ts';
import type { PushResult } from '../../activities/push/types.ts';
import { watermarksKey } from '../../activities/run/scheduled-layout.ts';
import { readSyncPointer, resetSyncState } from '../../activities/state/sync-state.ts';
import { readWatermarkState, resetWatermarkState } from '../../activities/state/watermarks.ts';
import { syncStatePointerKey } from '../../activities/sync/layout.ts';
import type { SyncKind, SyncResult } from '../../activities/sync/types.ts';
import { writeBackState } from '../../activities/writeback/ledger.ts';
import { openStore } from '../../config/storage.ts';
import { type KitError, PushRunInProgressError, SyncRunInProgressError } from '../../connectors/errors.ts';
import { type FeedKind, isFeedKind } from '../../contract/kinds.ts';
import { type CrmSyncInput, crmSync } from '../../workflows/crm-sync.ts';
import { type ScheduledFeedInput, scheduledFeed } from '../../workflows/scheduled-feed.ts';
import { type ScheduledPushInput, scheduledPush } from '../../workflows/scheduled-push.ts';
import { readLastSyncNight } from './sync-night.ts';

// The kinds of schedule, one entry each in SCHEDULE_KINDS: the workflow a run starts and how the service reads,
// shows and resets the state a run keeps beside its output. A push names no kind in its input; every other kind does.

/**
 * When a schedule runs and how it starts: every definition has it beside its kind's settings. One of `everyMs`,
 * `at` and `cron` says when (./timing.ts makes it Temporal's schedule spec).
 */
export interface ScheduleTiming {
  /** Every this long (`--every`), from the Unix epoch: a `1d` schedule runs at 00:00 UTC. */
  everyMs?: number;
  /** Each day at this wall-clock time (`--at HH:MM[:SS]`) in `timezone`. */
  at?: string;
  /** A cron expression (`--cron`: 5 fields, or 7 with seconds and year) in `timezone`. */
  cron?: string;
  /** The IANA time zone of `at` and `cron` (`--timezone`; default UTC). */
  timezone?: string;
  overlap?: ScheduleOverlapPolicy;
  paused?: boolean;
  note?: string;
}

/** What `create` needs: the push settings a user picks (the workflow's input) plus the schedule's timing and state. */
export interface PushScheduleDefinition
  extends Pick<
      ScheduledPushInput,
      | 'name'
      | 'watchlist'
      | 'output'
      | 'column'
      | 'signalTypes'
      | 'signalSubtypes'
      | 'limit'
      | 'since'
      | 'maxCredits'
      | 'concurrency'
      | 'lookbackMs'
      | 'formats'
      | 'notify'
    >,
    ScheduleTiming {}

/** What `create --kind company-search|contact-search|intent-contacts` needs: the feed and the schedule's timing. */
export interface FeedScheduleDefinition
  extends Pick<
      ScheduledFeedInput,
      'name' | 'kind' | 'output' | 'filters' | 'since' | 'maxCredits' | 'concurrency' | 'formats' | 'notify'
    >,
    ScheduleTiming {}

/** What `create --kind enrich` needs: the nightly CRM sync (docs/nightly-crm-enrichment.md) and its timing. */
export interface SyncScheduleDefinition
  extends Pick<
      CrmSyncInput,
      | 'name'
      | 'kind'
      | 'input'
      | 'output'
      | 'column'
      | 'idColumn'
      | 'keepColumns'
      | 'encoding'
      | 'sheet'
      | 'notify'
      | 'signalTypes'
      | 'limit'
      | 'maxCredits'
      | 'concurrency'
      | 'formats'
      | 'writeBack'
    >,
    ScheduleTiming {}

export type ScheduleDefinition = PushScheduleDefinition | FeedScheduleDefinition | SyncScheduleDefinition;

/** The input every run of a schedule is started with. */
export type ScheduleInput = ScheduledPushInput | ScheduledFeedInput | CrmSyncInput;

export type ScheduleRunResult = PushResult | FeedResult | SyncResult;

/** What `schedule state` shows and `schedule reset` does to the state a kind keeps under `<output>/<name>/`. */
interface ScheduleStateKeeper {
  /** The last run that committed the state, or null. */
  lastRun(output: string, name: string): Promise<object | null>;
  view(output: string, name: string, options: { domains?: string[]; all?: boolean }): Promise<Record<string, unknown>>;
  /** Forgets the state (all, or of `domains` where the kind keeps it per domain). */
  reset(output: string, name: string, domains?: string[]): Promise<Record<string, unknown>>;
}

/** One kind of schedule, typed by the input its workflow takes. */
export interface ScheduleKind<I extends ScheduleInput = ScheduleInput> {
  /** The workflow each run starts (its input: the definition without the timing, plus the task queues). */
  workflow: (input: I) => Promise<ScheduleRunResult>;
  /** The schedule's `signal-kit` memo, as the Temporal UI shows it. */
  memo: string;
  /** Whether `schedule run --full-refresh` and `schedule backfill` apply (only a push keeps per-domain windows). */
  backfills: boolean;
  state: ScheduleStateKeeper;
  /** The schedule's id is this and its name; its runs' workflow ids start with it. */
  idPrefix: ScheduleIdPrefix;
  /** The refusal of a second run of the schedule while `running` are in progress. */
  inProgress: (name: string, running: readonly string[]) => KitError;
}

/**
 * Pushes and feeds are `signal-kit-push-<name>`, CRM syncs `signal-kit-sync-<name>`. A sync schedule created before
 * syncs had their own prefix keeps its `signal-kit-push-` id (and its runs theirs): the service finds a schedule by
 * its name under either prefix.
 */
export const SCHEDULE_ID_PREFIXES = ['signal-kit-push-', 'signal-kit-sync-'] as const;
export type ScheduleIdPrefix = (typeof SCHEDULE_ID_PREFIXES)[number];

/** A push's (and a feed's) state: the watermarks, the signals remembered above them, the last run. */
const watermarkState: ScheduleStateKeeper = {
  lastRun: async (output, name) => (await readWatermarkState(openStore(output), name)).lastRun ?? null,
  async view(output, name, options) {
    const state = await readWatermarkState(openStore(output), name);
    const times = [...state.marks.values()].sort();
    const view: Record<string, unknown> = {
      name,
      state: openStore(output).urlOf(watermarksKey(name)),
      committedBy: state.runId,
      domains: state.marks.size,
      watermarks: new Set(times).size,
      oldest: times[0] ?? null,
      newest: times.at(-1) ?? null,
      remembering: state.pushed.size,
      lastRun: state.lastRun ?? null,
    };
    const wanted = options.all ? [...state.marks.keys(), ...state.pushed.keys()] : (options.domains ?? []);
    if (wanted.length > 0) {
      view['perDomain'] = Object.fromEntries(
        [...new Set(wanted)].sort().map((domain) => [
          domain,
          {
            watermark: state.marks.get(domain) ?? null,
            pushedAboveWatermark: state.pushed.get(domain)?.length ?? 0,
          },
        ]),
      );
    }
    return view;
  },
  async reset(output, name, domains) {
    const reset = await resetWatermarkState(openStore(output), name, domains);
    return { name, reset: domains ?? 'all', ...reset };
  },
};

/** A CRM sync's state: where it is, which run committed it, its companies, the last run, its write-back's ledger. */
const syncState: ScheduleStateKeeper = {
  async lastRun(output, name) {
    const store = openStore(output);
    const lastRun = (await readSyncPointer(store, name))?.last_run;
    const night = await readLastSyncNight(store, name);
    if (!lastRun && !night.lastNight && night.ignored.length === 0) return null;
    return { ...lastRun, lastNight: night.lastNight, ignoredManifests: night.ignored };
  },
  async view(output, name) {
    const store = openStore(output);
    const pointer = await readSyncPointer(store, name);
    const night = await readLastSyncNight(store, name);
    return {
      name,
      state: store.urlOf(syncStatePointerKey(name)),
      committedBy: pointer?.run_id ?? null,
      updatedAt: pointer?.updated_at ?? null,
      companies: pointer?.companies ?? 0,
      lastRun: pointer?.last_run ?? null,
      lastNight: night.lastNight,
      ignoredManifests: night.ignored,
      writeBack: await writeBackState(store, name),
    };
  },
  async reset(output, name) {
    await resetSyncState(openStore(output), name);
    return { name, reset: 'all' };
  },
};

const pushRuns = {
  idPrefix: 'signal-kit-push-',
  inProgress: (name: string, running: readonly string[]) => new PushRunInProgressError(name, running),
} as const;
const push: ScheduleKind<ScheduledPushInput> = {
  workflow: scheduledPush,
  memo: 'scheduled-push',
  backfills: true,
  state: watermarkState,
  ...pushRuns,
};
const feed: ScheduleKind<ScheduledFeedInput> = {
  workflow: scheduledFeed,
  memo: 'scheduled-feed',
  backfills: false,
  state: watermarkState,
  ...pushRuns,
};
const sync: ScheduleKind<CrmSyncInput> = {
  workflow: crmSync,
  memo: 'crm-sync',
  backfills: false,
  state: syncState,
  idPrefix: 'signal-kit-sync-',
  inProgress: (name, running) => new SyncRunInProgressError(name, running),
};

export type ScheduleKindName = 'push' | FeedKind | SyncKind;

/** Each kind with the input its workflow takes: every feed kind (contract/kinds.ts) runs `scheduledFeed`. */
type ScheduleKinds = { push: ScheduleKind<ScheduledPushInput> } & Record<FeedKind, ScheduleKind<ScheduledFeedInput>> &
  Record<SyncKind, ScheduleKind<CrmSyncInput>>;

/** Every kind of schedule. A new kind is a line here (and its definition, its flags in the `schedule` command). */
export const SCHEDULE_KINDS: ScheduleKinds = {
  push,
  'company-search': feed,
  'contact-search': feed,
  'intent-contacts': feed,
  enrich: sync,
  'enrich-contacts': sync,
};

/**
 * A schedule's kind, from its definition or its workflow input (a push's names none): its memo, backfills and state.
 * A run is started through `workflowStart`, which gives the workflow the input its kind takes.
 */
export function kindOf(given: ScheduleDefinition | ScheduleInput | { kind?: unknown }): ScheduleKind<never> {
  const name = 'kind' in given ? given.kind : undefined;
  if (name === undefined) return SCHEDULE_KINDS.push;
  const kind = Object.hasOwn(SCHEDULE_KINDS, String(name)) ? SCHEDULE_KINDS[name as ScheduleKindName] : undefined;
  if (!kind) throw new TypeError(`unknown schedule kind "${String(name)}"`);
  return kind;
}

/** The workflow a schedule's run starts and its arguments, each kind with its own input type. */
export type WorkflowStart =
  | { workflowType: ScheduleKind<ScheduledPushInput>['workflow']; args: [ScheduledPushInput] }
  | { workflowType: ScheduleKind<ScheduledFeedInput>['workflow']; args: [ScheduledFeedInput] }
  | { workflowType: ScheduleKind<CrmSyncInput>['workflow']; args: [CrmSyncInput] };

export const isFeedInput = (input: ScheduleInput): input is ScheduledFeedInput =>
  'kind' in input && isFeedKind(input.kind);

export const isSyncInput = (input: ScheduleInput): input is CrmSyncInput => 'kind' in input && !isFeedKind(input.kind);

/** What starts a run of `input`: the workflow of its kind, given the input its kind takes. */
export function workflowStart(input: ScheduleInput): WorkflowStart {
  if (isFeedInput(input)) return { workflowType: SCHEDULE_KINDS[input.kind].workflow, args: [input] };
  if ('kind' in input) return { workflowType: SCHEDULE_KINDS[input.kind].workflow, args: [input] };
  return { workflowType: SCHEDULE_KINDS.push.workflow, args: [input] };
}
