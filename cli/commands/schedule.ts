import { type Client, ScheduleOverlapPolicy, WorkflowFailedError } from '@temporalio/client';
import type { Duration } from '@temporalio/common';
import { msToNumber } from '@temporalio/common/lib/time.js';
import type { FeedResult, IntentFilters, SearchFilters } from '../../activities/feeds/types.ts';
import type { PushResult } from '../../activities/push/types.ts';
import { SCHEDULE_NAME } from '../../activities/run/scheduled-layout.ts';
import type { SyncKind, SyncResult } from '../../activities/sync/types.ts';
import { preflightWriteBack } from '../../activities/writeback/preflight.ts';
import type { WriteBackOptions, WritePolicy } from '../../activities/writeback/types.ts';
import { openStore } from '../../config/storage.ts';
import { parseTemporalConfig, type TemporalConfig } from '../../config/worker.ts';
import { FEED_KINDS, type FeedKind, isFeedKind } from '../../contract/kinds.ts';
import { runFailureMessage } from '../../library/run-failure.ts';
import type { ScheduleKindName, ScheduleTiming } from '../../library/schedules/kinds.ts';
import {
  createPushSchedule,
  deletePushSchedule,
  describePushSchedule,
  type FeedScheduleDefinition,
  listPushSchedules,
  type PushScheduleDefinition,
  pausePushSchedule,
  pushState,
  resetPush,
  type ScheduleDefinition,
  type SyncScheduleDefinition,
  startPushRun,
  startScheduleRun,
  triggerPushSchedule,
  unpausePushSchedule,
} from '../../library/schedules/service.ts';
import { isTimeZone, parseTimeOfDay, timingOf } from '../../library/schedules/timing.ts';
import { crmWritersFrom } from '../../workers/crm-writers.ts';
import { isoDate, list, locationUrl, positiveInt, required, signalFilters, UsageError } from '../args.ts';
import { checkNightInput } from '../input-columns.ts';
import { EXIT, exitCodeOf } from '../job-outcome.ts';
import { connectClient } from '../temporal.ts';
import { columnOptions, tableFormats } from './job-commands.ts';

// `signal-kit schedule …`: flags in, one operation of the schedules service (library/schedules/), JSON out.
// A schedule `signal-kit-push-<name>` starts the workflow of its kind (a push, a feed, the nightly CRM sync; see
// library/schedules/kinds.ts) on its timing; `run`, `state` and `describe` say why a run did not complete.

// ─── flag parsing ─────────────────────────────────────────────────────────────────────────────────────────────

/**
 * A duration as Temporal takes it (`6h`, `30m`, `1d`, `90s`, `1.5h`, `2 days`: the `ms` strings of its `Duration`),
 * parsed by Temporal's own parser → milliseconds, at least one second.
 */
export function parseEvery(flag: string, value: string | undefined): number {
  const raw = required(flag, value).trim();
  let ms: number;
  try {
    ms = msToNumber(raw as Duration);
  } catch {
    ms = Number.NaN;
  }
  if (!Number.isFinite(ms) || !/[a-z]$/i.test(raw)) {
    throw new UsageError(`--${flag} must be a duration such as 30m, 6h, 1d or 90m, got "${value}"`);
  }
  if (ms < 1000) throw new UsageError(`--${flag} must be at least 1s, got "${value}"`);
  return ms;
}

/**
 * When the schedule runs: `--every` (an interval), `--at HH:MM[:SS]` (each day) or `--cron` (Temporal's cron: 5
 * fields, or 7 with seconds and year), one of them; `--timezone` (IANA, default UTC) for `--at` and `--cron`.
 */
export function parseTiming(values: Pick<CreateFlags, 'every' | 'at' | 'cron' | 'timezone'>): ScheduleTiming {
  const given = (['every', 'at', 'cron'] as const).filter((flag) => values[flag] !== undefined);
  if (given.length === 0) throw new UsageError('--every, --at or --cron is required');
  if (given.length > 1)
    throw new UsageError(`give only one of --every, --at or --cron, got ${given.map((f) => `--${f}`).join(' and ')}`);
  const timezone = values.timezone?.trim();
  if (timezone !== undefined && !isTimeZone(timezone))
    throw new UsageError(`--timezone must be an IANA time zone such as Europe/Berlin or UTC, got "${values.timezone}"`);
  if (values.every !== undefined) {
    if (timezone !== undefined) throw new UsageError('--timezone applies to --at and --cron, not --every');
    return { everyMs: parseEvery('every', values.every) };
  }
  const zone = timezone !== undefined ? { timezone } : {};
  if (values.at !== undefined) {
    if (!parseTimeOfDay(values.at))
      throw new UsageError(`--at must be a time of day HH:MM or HH:MM:SS (24-hour), got "${values.at}"`);
    return { at: values.at.trim(), ...zone };
  }
  const cron = values.cron!.trim();
  const fields = cron.split(/\s+/).length;
  if (!cron.startsWith('@') && (fields < 5 || fields > 7))
    throw new UsageError(`--cron must have 5 fields (minute hour day month weekday), or 6-7, got "${values.cron}"`);
  return { cron, ...zone };
}

const OVERLAP_POLICIES = ['SKIP', 'BUFFER_ONE', 'BUFFER_ALL', 'CANCEL_OTHER', 'TERMINATE_OTHER', 'ALLOW_ALL'] as const;

export function parseOverlap(flag: string, value: string | undefined): ScheduleOverlapPolicy | undefined {
  if (value === undefined) return undefined;
  const policy = value.trim().toUpperCase().replace(/-/g, '_');
  const match = OVERLAP_POLICIES.find((name) => name === policy);
  if (!match) {
    const names = OVERLAP_POLICIES.map((name) => name.toLowerCase().replace(/_/g, '-')).join(', ');
    throw new UsageError(`--${flag} must be one of ${names}, got "${value}"`);
  }
  return ScheduleOverlapPolicy[match];
}

function pushName(flag: string | undefined, value: string | undefined, command: string): string {
  if (value === undefined || value === '') {
    throw new UsageError(flag ? `--${flag} is required` : `usage: signal-kit schedule ${command} NAME`);
  }
  if (!SCHEDULE_NAME.test(value)) {
    const what = flag ? `--${flag}` : 'NAME';
    throw new UsageError(`${what} must be lower-case letters, digits, "-" or "_" (at most 63), got "${value}"`);
  }
  return value;
}

/** `--notify`: an http(s) URL that takes a POST (a Slack incoming webhook's too). */
function notifyUrl(value: string): string {
  const url = URL.parse(value.trim());
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:') || url.username || url.password)
    throw new UsageError(`--notify must be an http(s) URL without credentials, got "${value}"`);
  return url.href;
}

/** A night's export: every file a one-off job reads (CSV, TSV or Excel's tab-separated .txt, .xlsx, JSONL). */
function exportUrl(flag: string, value: string | undefined): string {
  const url = locationUrl(flag, value);
  if (!/\.((csv|tsv|txt|jsonl|ndjson)(\.gz)?|xlsx)$/i.test(url)) {
    throw new UsageError(
      `--${flag} must be a .csv, .tsv or .txt, .xlsx, or .jsonl/.ndjson file (text files optionally .gz), got "${value}"`,
    );
  }
  return url;
}

function watchlistUrl(flag: string, value: string | undefined): string {
  const url = locationUrl(flag, value);
  if (!/\.(csv|jsonl|ndjson)(\.gz)?$/i.test(url)) {
    throw new UsageError(`--${flag} must be a .csv or .jsonl/.ndjson file (optionally .gz), got "${value}"`);
  }
  return url;
}

/** `schedule create`'s flags, as commander hands them over (declared in cli/program.ts). */
export interface CreateFlags {
  name?: string;
  watchlist?: string;
  input?: string;
  idColumn?: string;
  keepColumns?: string;
  encoding?: string;
  sheet?: string;
  allowMissingInput?: boolean;
  notify?: string;
  writeBack?: string;
  writeFields?: string;
  writePolicy?: string[];
  skipCrmCheck?: boolean;
  output?: string;
  every?: string;
  at?: string;
  cron?: string;
  timezone?: string;
  column?: string;
  signalTypes?: string;
  signalSubtypes?: string;
  limit?: string;
  since?: string;
  maxCredits?: string;
  concurrency?: string;
  lookback?: string;
  overlap?: string;
  paused?: boolean;
  note?: string;
  format?: string;
  kind?: string;
  industries?: string;
  employeeCountMin?: string;
  employeeCountMax?: string;
  keywords?: string;
  technologies?: string;
  competitors?: string;
  painPoints?: string;
  initiatives?: string;
  seniority?: string;
  department?: string;
  jobTitle?: string;
  topics?: string;
  emailValidated?: boolean;
  hasEmail?: boolean;
  hasMobile?: boolean;
}

/** Flags that only some kinds take, with the kinds that take them (a flag given to another kind is a mistake). */
const FLAG_KINDS: Record<string, readonly string[]> = {
  watchlist: ['push'],
  input: ['enrich', 'enrich-contacts'],
  idColumn: ['enrich', 'enrich-contacts'],
  keepColumns: ['enrich', 'enrich-contacts'],
  encoding: ['enrich', 'enrich-contacts'],
  sheet: ['enrich', 'enrich-contacts'],
  allowMissingInput: ['enrich', 'enrich-contacts'],
  writeBack: ['enrich', 'enrich-contacts'],
  writeFields: ['enrich', 'enrich-contacts'],
  writePolicy: ['enrich', 'enrich-contacts'],
  skipCrmCheck: ['enrich', 'enrich-contacts'],
  column: ['push', 'enrich', 'enrich-contacts'],
  limit: ['push', 'enrich', 'enrich-contacts'],
  signalSubtypes: ['push'],
  lookback: ['push'],
  signalTypes: ['push', 'company-search', 'contact-search', 'enrich', 'enrich-contacts'],
  industries: ['company-search'],
  employeeCountMin: ['company-search'],
  employeeCountMax: ['company-search'],
  keywords: ['company-search'],
  technologies: ['company-search'],
  competitors: ['company-search'],
  painPoints: ['company-search'],
  initiatives: ['company-search'],
  jobTitle: ['contact-search'],
  seniority: ['contact-search', 'intent-contacts'],
  department: ['contact-search', 'intent-contacts'],
  topics: ['intent-contacts'],
  emailValidated: ['intent-contacts'],
  hasEmail: ['intent-contacts'],
  hasMobile: ['intent-contacts'],
  since: ['push', 'company-search', 'contact-search'],
};

const flagName = (key: string) => `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;

function nonNegativeInt(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const number = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(number))
    throw new UsageError(`--${flag} must be a whole number, got "${value}"`);
  return number;
}

/** `schedule create --kind company-search|contact-search|intent-contacts`: the feed to create. */
export function parseFeedCreate(kind: FeedKind, values: CreateFlags): FeedScheduleDefinition {
  for (const [key, kinds] of Object.entries(FLAG_KINDS)) {
    if (values[key as keyof CreateFlags] !== undefined && !kinds.includes(kind)) {
      throw new UsageError(`${flagName(key)} does not apply to --kind ${kind}`);
    }
  }
  let filters: SearchFilters | IntentFilters;
  if (kind === 'intent-contacts') {
    const topics = list(values.topics);
    if (!topics)
      throw new UsageError('--topics is required for --kind intent-contacts (b2b_ ids: signal-kit topics search)');
    const bad = topics.find((topic) => !/^b2b_\d+$/.test(topic));
    if (bad) throw new UsageError(`--topics must be b2b_<number> ids, got "${bad}"`);
    filters = {
      topic_ids: topics,
      ...(values.emailValidated ? { email_validated: true } : {}),
      ...(values.hasEmail ? { has_email: true } : {}),
      ...(values.hasMobile ? { has_mobile: true } : {}),
    };
  } else {
    const { types } = signalFilters({ signalTypes: values.signalTypes });
    filters = { ...(types ? { signal_types: types } : {}) };
  }
  const seniority = list(values.seniority);
  const department = list(values.department);
  if (seniority) filters.seniority = seniority;
  if (department) filters.department = department;
  if (kind === 'company-search') {
    const search = filters as SearchFilters;
    const industries = list(values.industries);
    if (industries) search.industries = industries;
    const min = nonNegativeInt('employee-count-min', values.employeeCountMin);
    const max = nonNegativeInt('employee-count-max', values.employeeCountMax);
    if (min !== undefined && max !== undefined && min > max)
      throw new UsageError('--employee-count-min must not exceed --employee-count-max');
    if (min !== undefined) search.employee_count_min = min;
    if (max !== undefined) search.employee_count_max = max;
    const content: Record<string, string[]> = {};
    for (const [flag, field] of [
      ['keywords', 'keywords'],
      ['technologies', 'technologies'],
      ['competitors', 'competitors'],
      ['painPoints', 'pain_points'],
      ['initiatives', 'initiatives'],
    ] as const) {
      const values_ = list(values[flag]);
      if (values_) content[field] = values_;
    }
    if (Object.keys(content).length > 0) search.content_filters = content;
  }
  if (kind === 'contact-search' && values.jobTitle?.trim())
    (filters as SearchFilters).job_title = values.jobTitle.trim();
  const definition: FeedScheduleDefinition = {
    name: pushName('name', values.name, 'create'),
    kind,
    output: locationUrl('output', values.output),
    filters,
    ...parseTiming(values),
    overlap: parseOverlap('overlap', values.overlap) ?? ScheduleOverlapPolicy.SKIP,
    paused: values.paused === true,
  };
  Object.assign(definition, runBounds(values), tableFormats(values.format), notifyOption(values));
  if (values.note) definition.note = values.note;
  return definition;
}

/** `--notify` as every kind's definition holds it: absent when not given. */
function notifyOption(values: CreateFlags): { notify?: string } {
  return values.notify !== undefined ? { notify: notifyUrl(values.notify) } : {};
}

/** `--since`, `--max-credits` and `--concurrency` as a push or feed definition holds them: absent when not given. */
function runBounds(values: CreateFlags): { since?: string; maxCredits?: number; concurrency?: number } {
  const since = isoDate('since', values.since);
  const maxCredits = positiveInt('max-credits', values.maxCredits);
  const concurrency = positiveInt('concurrency', values.concurrency);
  return {
    ...(since ? { since } : {}),
    ...(maxCredits !== undefined ? { maxCredits } : {}),
    ...(concurrency !== undefined ? { concurrency } : {}),
  };
}

/** How `schedule create` reads its flags for each `--kind` but a feed's (a push when none is given). */
const CREATE_PARSERS: Record<Exclude<ScheduleKindName, FeedKind>, (values: CreateFlags) => ScheduleDefinition> = {
  push: (values) => parseCreate(values),
  enrich: (values) => parseSyncCreate('enrich', values),
  'enrich-contacts': (values) => parseSyncCreate('enrich-contacts', values),
};

/** `schedule create`'s flags as the push, feed or CRM sync to create (by `--kind`); every mistake names its flag. */
export function parseScheduleCreate(values: CreateFlags): ScheduleDefinition {
  const kind = values.kind ?? 'push';
  if (isFeedKind(kind)) return parseFeedCreate(kind, values);
  const parse = Object.hasOwn(CREATE_PARSERS, kind) ? CREATE_PARSERS[kind as keyof typeof CREATE_PARSERS] : undefined;
  if (!parse) {
    throw new UsageError(
      `--kind must be one of push, enrich, enrich-contacts, ${FEED_KINDS.join(', ')}, got "${kind}"`,
    );
  }
  return parse(values);
}

/** `schedule create --kind enrich|enrich-contacts`: the nightly CRM sync of an export (docs/nightly-crm-enrichment.md). */
export function parseSyncCreate(kind: 'enrich' | 'enrich-contacts', values: CreateFlags): SyncScheduleDefinition {
  for (const [key, kinds] of Object.entries(FLAG_KINDS)) {
    if (values[key as keyof CreateFlags] !== undefined && !kinds.includes(kind))
      throw new UsageError(`${flagName(key)} does not apply to --kind ${kind}`);
  }
  const { limit, types } = signalFilters(values);
  const input = exportUrl('input', values.input);
  if (values.sheet !== undefined && !/\.xlsx$/i.test(input))
    throw new UsageError(`--sheet applies only to an .xlsx --input, got "${values.input}"`);
  const definition: SyncScheduleDefinition = {
    name: pushName('name', values.name, 'create'),
    kind,
    input,
    output: locationUrl('output', values.output),
    ...parseTiming(values),
    overlap: parseOverlap('overlap', values.overlap) ?? ScheduleOverlapPolicy.SKIP,
    paused: values.paused === true,
    ...columnOptions({ ...values, column: values.column || undefined, idColumn: values.idColumn || undefined }),
    ...(types ? { signalTypes: types } : {}),
    ...notifyOption(values),
    ...(limit !== undefined ? { limit } : {}),
    ...(values.note ? { note: values.note } : {}),
    ...writeBackOptions(values),
  };
  return Object.assign(definition, runBounds(values), tableFormats(values.format));
}

/** `--write-back`, `--write-fields`, `--write-policy` as the schedule keeps them (no secret: the token is the worker's). */
function writeBackOptions(values: CreateFlags): { writeBack?: WriteBackOptions } {
  if (values.writeBack === undefined) {
    if (values.writeFields !== undefined || values.writePolicy !== undefined || values.skipCrmCheck !== undefined)
      throw new UsageError('--write-fields, --write-policy and --skip-crm-check need --write-back hubspot|salesforce');
    return {};
  }
  if (values.writeBack !== 'hubspot' && values.writeBack !== 'salesforce')
    throw new UsageError(`--write-back must be hubspot or salesforce, got "${values.writeBack}"`);
  const fields = list(values.writeFields);
  const policies: Record<string, WritePolicy> = {};
  for (const entry of values.writePolicy ?? []) {
    const [field, policy] = entry.split('=').map((part) => part.trim());
    if (!field || (policy !== 'overwrite' && policy !== 'fill-empty'))
      throw new UsageError(`--write-policy must be <field>=overwrite|fill-empty, got "${entry}"`);
    policies[field] = policy;
  }
  const policy = Object.keys(policies).length > 0 ? { policies } : {};
  return { writeBack: { crm: values.writeBack, ...(fields ? { fields } : {}), ...policy } };
}

/**
 * The night's pre-flight, at create: this process's CRM settings (the worker's variables) read the CRM's schema and
 * the token's scopes; a field or scope the night would be refused for throws `CrmPreflightError` (exit 2) naming
 * each problem and its fix, before the schedule exists. `--skip-crm-check` where the CRM is not reachable from here.
 */
async function checkWriteBack(kind: SyncKind, writeBack: WriteBackOptions): Promise<void> {
  const { crm, fields } = writeBack;
  await preflightWriteBack(crmWritersFrom()(crm), { crm, kind, ...(fields ? { fields } : {}) });
}

/** `schedule create`'s flags as the push to create; every mistake is a `UsageError` naming its flag. */
export function parseCreate(values: CreateFlags): PushScheduleDefinition {
  for (const [key, kinds] of Object.entries(FLAG_KINDS)) {
    if (values[key as keyof CreateFlags] !== undefined && !kinds.includes('push'))
      throw new UsageError(`${flagName(key)} applies only to a feed (--kind ${kinds.join('|')})`);
  }
  const { limit, types, subtypes } = signalFilters(values);
  const definition: PushScheduleDefinition = {
    name: pushName('name', values.name, 'create'),
    watchlist: watchlistUrl('watchlist', values.watchlist),
    output: locationUrl('output', values.output),
    ...parseTiming(values),
    overlap: parseOverlap('overlap', values.overlap) ?? ScheduleOverlapPolicy.SKIP,
    paused: values.paused === true,
  };
  if (values.column) definition.column = values.column;
  if (types) definition.signalTypes = types;
  if (subtypes) definition.signalSubtypes = subtypes;
  if (limit !== undefined) definition.limit = limit;
  Object.assign(definition, runBounds(values), notifyOption(values));
  if (values.lookback !== undefined) definition.lookbackMs = parseEvery('lookback', values.lookback);
  Object.assign(definition, tableFormats(values.format));
  if (values.note) definition.note = values.note;
  return definition;
}

// ─── the command ─────────────────────────────────────────────────────────────────────────────────────────────

export interface ScheduleCommandDeps {
  /** A connected client (tests); otherwise one is connected from the environment and closed at the end. */
  client?: Client;
  temporal?: TemporalConfig;
  /** Where results go (default stdout). */
  print?: (text: string) => void;
}

/** `signal-kit schedule SUBCOMMAND [NAME] …`: one operation on the server, its answer printed as JSON. */
export async function runScheduleCommand(
  sub: string,
  name: string | undefined,
  flags: CreateFlags & ScheduleFlags,
  deps: ScheduleCommandDeps = {},
): Promise<number> {
  const print = deps.print ?? ((text: string) => console.log(text));
  const action = parseSubcommand(sub, name, flags);
  const temporal = deps.temporal ?? parseTemporalConfig();
  const client = deps.client ?? (await connectClient(temporal));
  try {
    let code = 0;
    const result = await action(client, temporal, (exitCode) => {
      code = exitCode;
    });
    print(JSON.stringify(result, null, 2));
    return code;
  } finally {
    if (!deps.client) await client.connection.close();
  }
}

/** A subcommand: what it prints; `exit` sets the exit code when it is not 0 (a run waited for exits like a job). */
type Action = (client: Client, temporal: TemporalConfig, exit: (code: number) => void) => Promise<unknown>;

/** A run's result as the command prints it (a failed run's partial result too), exiting with its status's code. */
async function waitForRun(
  result: () => Promise<PushResult | FeedResult | SyncResult>,
  exit: (code: number) => void,
): Promise<unknown> {
  try {
    const value = await result();
    exit(exitCodeOf(value));
    return value;
  } catch (error) {
    if (!(error instanceof WorkflowFailedError)) throw error;
    exit(EXIT.failed);
    // A night that failed in its finalize carries its result; one that failed before (its export unreadable) only
    // the failure, whose reason lies under Temporal's wrappers ("Activity task failed").
    const details = (error.cause as { details?: unknown[] } | undefined)?.details?.[0];
    const reason = runFailureMessage(error);
    return details && typeof details === 'object' ? { error: reason, ...details } : { error: reason };
  }
}

/** The flags of the subcommands other than `create`, as commander hands them over; each takes its own. */
export interface ScheduleFlags {
  note?: string;
  overlap?: string;
  from?: string;
  to?: string;
  wait?: boolean;
  fullRefresh?: boolean;
  domain?: string[];
  domains?: boolean;
  output?: string;
}

/** Which watermarks `state` and `reset` look at: `--output` (checked) and the `--domain`s, normalized. */
function watermarkTarget(values: ScheduleFlags): { output?: string; domains?: string[] } {
  const output = values.output === undefined ? undefined : locationUrl('output', values.output);
  return {
    ...(output ? { output } : {}),
    ...(values.domain ? { domains: values.domain.map((d) => d.trim().toLowerCase()) } : {}),
  };
}

/**
 * A subcommand with its schedule name and flags (commander has checked which ones it takes), checked completely
 * before anything is sent to the server.
 */
export function parseSubcommand(
  sub: string,
  scheduleName: string | undefined,
  values: CreateFlags & ScheduleFlags = {},
): Action {
  if (sub === 'create') {
    const definition = parseScheduleCreate(values);
    return async (client, temporal) => {
      if ('input' in definition) await checkNightInput(definition, openStore, values.allowMissingInput === true);
      if ('writeBack' in definition && definition.writeBack && values.skipCrmCheck !== true)
        await checkWriteBack(definition.kind, definition.writeBack);
      const scheduleId = await createPushSchedule(client, temporal, definition);
      return { name: definition.name, scheduleId, created: true, ...timingOf(definition) };
    };
  }
  if (sub === 'list') return (client) => listPushSchedules(client);
  const name = pushName(undefined, scheduleName, sub);
  switch (sub) {
    case 'describe':
      return (client) => describePushSchedule(client, name);
    case 'pause':
      return async (client) => {
        await pausePushSchedule(client, name, values.note);
        return { name, paused: true };
      };
    case 'unpause':
      return async (client) => {
        await unpausePushSchedule(client, name, values.note);
        return { name, paused: false };
      };
    case 'trigger': {
      const overlap = parseOverlap('overlap', values.overlap);
      return async (client) => {
        await triggerPushSchedule(client, name, overlap);
        return { name, triggered: true };
      };
    }
    case 'run': {
      return async (client, _temporal, exit) => {
        const started = await startScheduleRun(client, name, { fullRefresh: values.fullRefresh === true });
        if (values.wait) return waitForRun(started.result, exit);
        return { name, workflowId: started.workflowId, fullRefresh: values.fullRefresh === true };
      };
    }
    case 'backfill': {
      const from = isoDate('from', required('from', values.from))!;
      const to = isoDate('to', required('to', values.to))!;
      if (Date.parse(to) <= Date.parse(from)) throw new UsageError('--to must be later than --from');
      return async (client, _temporal, exit) => {
        const started = await startPushRun(client, name, { window: { from, to } });
        if (values.wait) return waitForRun(started.result, exit);
        return { name, backfill: { from, to }, workflowId: started.workflowId };
      };
    }
    case 'state': {
      const target = watermarkTarget(values);
      return (client) => pushState(client, name, { ...target, ...(values.domains ? { all: true } : {}) });
    }
    case 'reset': {
      const target = watermarkTarget(values);
      return (client) => resetPush(client, name, target);
    }
    case 'delete':
      return async (client) => {
        await deletePushSchedule(client, name);
        return { name, deleted: true };
      };
    default:
      throw new UsageError(`unknown subcommand "schedule ${sub}"`);
  }
}
