/**
 * A job's dry run (`--dry-run`): what it would read and could cost, from the input and the output location alone.
 * Nothing is started and the Signal Data Service is never called (not even its free endpoints).
 */

import type { InputReading } from '../activities/input/identify.ts';
import { manifestKey } from '../activities/jobs/layout.ts';
import { scanInput } from '../activities/jobs/scan.ts';
import type { JobKind, Manifest, PreparedInput } from '../activities/jobs/types.ts';
import { CREDITS, MAX_SIGNALS_PER_CALL, RATE_LIMIT_PER_MINUTE } from '../connectors/signal-api/limits.ts';
import type { Store } from '../connectors/storage/store.ts';
import { jobManifestClaims } from '../contract/manifest-place.ts';
import { ReadableManifestSchema, readPlacedManifest } from '../contract/manifest-read.ts';
import { ENRICH_BATCH_SIZE } from '../workflows/bulk-enrich.ts';
import { VERIFY_CHUNK_SIZE } from '../workflows/verify-emails.ts';
import type { JobStart } from './jobs.ts';

export interface CreditEstimate {
  /** The most the job can be charged, from the spec's prices and limits (and --max-credits); null when unknown. */
  worstCase: number | null;
  worstCaseBasis: string;
  /** What the job should cost, learned from earlier jobs under the same output; see `expectedBasis`. */
  expected: number | null;
  expectedBasis: string;
}

/** The job's input as it would be split (the input counts of `PreparedInput`), and what it would cost. */
export interface DryRunReport extends Omit<PreparedInput, 'input'> {
  dryRun: true;
  jobId: string;
  kind: JobKind;
  input: string | null;
  output: string;
  /** Paid API calls the job would make (one per batch and one per row without a domain; one submit for an export). */
  calls: number;
  /** enrich and verify-emails: bulk calls and single calls apart, and how long they take at the account's rate limit. */
  callsByKind?: { bulk: number; single: number; minutesAtRateLimit: number };
  credits: CreditEstimate;
  /** Manifests under the output that were not believed (too large, not JSON, not the shipped schema), and why. */
  skippedManifests: SkippedManifest[];
}

export interface SkippedManifest {
  key: string;
  reason: string;
}

/**
 * Earlier manifests read to learn a rate, and objects listed to find them: a dry run stays quick on big buckets (an
 * S3 listing costs a HEAD per object). A job's manifest sorts before its parts, so the first job is always seen.
 */
const HISTORY_MANIFESTS = 50;
const HISTORY_KEYS = 10_000;

/** How a job reads its input, from its start request (the same reading the job's own preparation does). */
function inputReading(input: Exclude<JobStart, { workflow: 'intentExport' }>['input']): InputReading {
  return {
    input: input.input,
    column: input.column,
    idColumn: input.idColumn,
    encoding: input.encoding,
    sheet: input.sheet,
    keepColumns: input.keepColumns,
  };
}

export async function dryRun(job: JobStart, openStore: (url: string) => Store): Promise<DryRunReport> {
  const out = openStore(job.input.output);
  if (job.workflow === 'intentExport') return dryRunExport(job, out);
  if (job.workflow === 'enrichContacts') return dryRunContacts(job, openStore, out);
  const kind = job.workflow === 'bulkEnrich' ? 'enrich' : 'verify-emails';
  const batchSize = kind === 'enrich' ? ENRICH_BATCH_SIZE : VERIFY_CHUNK_SIZE;
  const scan = await scanInput(openStore, { kind, ...inputReading(job.input), batchSize });
  const singles = scan.singles ?? 0;
  const { maxCredits } = job.input;
  const options = job.workflow === 'bulkEnrich' ? (job.input.options ?? {}) : {};
  const perDomain = job.workflow === 'bulkEnrich' ? (options.limit ?? MAX_SIGNALS_PER_CALL) : 1;
  const perValue = kind === 'enrich' ? perDomain * CREDITS.perEnrichedSignal : 1;
  // Rows without a domain are counted at their worst too: a single call may return as many signals as one domain.
  const uncapped = (scan.distinct + singles) * perValue;
  const worstCase = maxCredits === undefined ? uncapped : Math.min(uncapped, maxCredits);
  const what = kind === 'enrich' ? 'domains' : 'addresses';
  const worstCaseBasis =
    kind === 'enrich'
      ? `${scan.distinct} distinct domains${singles > 0 ? ` + ${singles} distinct rows named only by LinkedIn URL or company name` : ''} × ${perDomain} signals (${options.limit ? '--limit' : 'the most one call returns'}) × ${CREDITS.perEnrichedSignal} credits per signal`
      : `${scan.distinct} distinct addresses × 1 credit (duplicates are charged once)`;
  const capped = maxCredits !== undefined && maxCredits < uncapped ? `, capped by --max-credits ${maxCredits}` : '';

  const skipped: SkippedManifest[] = [];
  const { expected, expectedBasis } = await expectedFromOwnRun(
    out,
    job.input,
    kind,
    skipped,
    async (answered, resumedRun) => {
      const remaining = Math.max(0, scan.distinct + singles - answered);
      const history = await learnRate(out, kind, (m) => sameOptions(m, options), skipped);
      const resumed = resumedRun ? ` (${answered} already answered by this job's earlier run)` : '';
      if (history) {
        return {
          expected: Math.min(worstCase, Math.round(remaining * history.rate)),
          expectedBasis: `${remaining} ${what} to answer${resumed} × ${round(history.rate)} credits per ${kind === 'enrich' ? 'domain' : 'address'}, the rate of ${history.jobs} earlier completed ${kind} job(s) under this output${kind === 'enrich' ? ' with the same filters' : ''}`,
        };
      }
      return {
        expected: Math.min(worstCase, remaining * perValue),
        expectedBasis: `no earlier completed ${kind} job${kind === 'enrich' ? ' with the same filters' : ''} under this output to learn a rate from: the worst case for the ${remaining} ${what} left to answer${resumed}`,
      };
    },
  );
  return {
    dryRun: true,
    jobId: job.input.jobId,
    kind,
    input: job.input.input,
    output: job.input.output,
    ...counts(scan),
    calls: scan.batches + singles,
    callsByKind: {
      bulk: scan.batches,
      single: singles,
      minutesAtRateLimit: round((scan.batches + singles) / RATE_LIMIT_PER_MINUTE),
    },
    ...(scan.columns ? { columns: scan.columns } : {}),
    credits: { worstCase, worstCaseBasis: worstCaseBasis + capped, expected, expectedBasis },
    skippedManifests: skipped,
  };
}

/**
 * `enrich-contacts --dry-run`: one paced call per distinct contact (the spec has no bulk form), so the calls are the
 * distinct contacts and the time is their count at the account's rate limit; each can cost 2 credits per person-level
 * signal up to `--limit` (500 without it).
 */
async function dryRunContacts(
  job: Extract<JobStart, { workflow: 'enrichContacts' }>,
  openStore: (url: string) => Store,
  out: Store,
): Promise<DryRunReport> {
  const scan = await scanInput(openStore, { kind: 'enrich-contacts', ...inputReading(job.input), batchSize: 1 });
  const contacts = scan.distinct + (scan.singles ?? 0);
  const options = job.input.options ?? {};
  const perContact = (options.limit ?? MAX_SIGNALS_PER_CALL) * CREDITS.perEnrichedSignal;
  const uncapped = contacts * perContact;
  const { maxCredits } = job.input;
  const worstCase = maxCredits === undefined ? uncapped : Math.min(uncapped, maxCredits);
  const capped = maxCredits !== undefined && maxCredits < uncapped ? `, capped by --max-credits ${maxCredits}` : '';
  const worstCaseBasis = `${contacts} distinct contacts × ${options.limit ?? MAX_SIGNALS_PER_CALL} person-level signals (${options.limit ? '--limit' : 'the most one call returns'}) × ${CREDITS.perEnrichedSignal} credits per signal; a contact the service does not know is free${capped}`;
  const skipped: SkippedManifest[] = [];
  const { expected, expectedBasis } = await expectedFromOwnRun(
    out,
    job.input,
    'enrich-contacts',
    skipped,
    async (answered) => {
      const remaining = Math.max(0, contacts - answered);
      const history = await learnRate(out, 'enrich-contacts', (m) => sameOptions(m, options), skipped);
      if (history) {
        return {
          expected: Math.min(worstCase, Math.round(remaining * history.rate)),
          expectedBasis: `${remaining} contacts to answer × ${round(history.rate)} credits per contact, the rate of ${history.jobs} earlier completed enrich-contacts job(s) under this output with the same filters`,
        };
      }
      return {
        expected: Math.min(worstCase, remaining * perContact),
        expectedBasis: `no earlier completed enrich-contacts job with the same filters under this output to learn a rate from: the worst case for the ${remaining} contacts left to answer`,
      };
    },
  );
  return {
    dryRun: true,
    jobId: job.input.jobId,
    kind: 'enrich-contacts',
    input: job.input.input,
    output: job.input.output,
    ...counts(scan),
    distinct: contacts,
    batches: 0,
    calls: contacts,
    callsByKind: { bulk: 0, single: contacts, minutesAtRateLimit: round(contacts / RATE_LIMIT_PER_MINUTE) },
    ...(scan.columns ? { columns: scan.columns } : {}),
    credits: { worstCase, worstCaseBasis, expected, expectedBasis },
    skippedManifests: skipped,
  };
}

interface ExpectedCredits {
  expected: number;
  expectedBasis: string;
}

/**
 * What a job is expected to pay, from its own manifest under its output: nothing when it already completed; else
 * `estimate` for the values it has not answered yet (`answered` by an earlier run stopped by its budget or a failure,
 * `resumed` when there was one).
 */
async function expectedFromOwnRun(
  out: Store,
  job: { jobId: string; output: string },
  kind: JobKind,
  skipped: SkippedManifest[],
  estimate: (answered: number, resumed: boolean) => Promise<ExpectedCredits>,
): Promise<ExpectedCredits> {
  const own = await readManifest(out, manifestKey({ jobId: job.jobId, kind, output: job.output }), skipped);
  if (own?.status === 'completed') {
    return {
      expected: 0,
      expectedBasis: `job ${job.jobId} already completed under this output: running it again returns its manifest and pays nothing`,
    };
  }
  // A job resumed after a budget stop or a failure pays only for the values it has not answered yet.
  return estimate(own ? own.counts.ok + own.counts.not_found : 0, own !== undefined);
}

async function dryRunExport(job: Extract<JobStart, { workflow: 'intentExport' }>, out: Store): Promise<DryRunReport> {
  const topics = job.input.request.topic_ids;
  const distinct = new Set(topics).size;
  const skipped: SkippedManifest[] = [];
  const own = await readManifest(
    out,
    manifestKey({ jobId: job.input.jobId, kind: 'intent-export', output: '' }),
    skipped,
  );
  const history = own?.status === 'completed' ? undefined : await learnRate(out, 'intent-export', () => true, skipped);
  const expected = own?.status === 'completed' ? 0 : history ? Math.round(distinct * history.rate) : null;
  const expectedBasis =
    own?.status === 'completed'
      ? `job ${job.input.jobId} already completed under this output: running it again returns its manifest and pays nothing`
      : history
        ? `${distinct} topics × ${round(history.rate)} credits per topic, the flat rate paid by ${history.jobs} earlier export(s) under this output`
        : 'no earlier export under this output to learn the flat rate per topic from';
  return {
    dryRun: true,
    jobId: job.input.jobId,
    kind: 'intent-export',
    input: null,
    output: job.input.output,
    rows: topics.length,
    distinct,
    duplicates: topics.length - distinct,
    invalid: 0,
    batches: 1,
    batchSize: distinct,
    calls: 1,
    credits: {
      worstCase: null,
      worstCaseBasis:
        'the spec charges an export a flat rate per topic without stating it; the contacts in the file cost nothing more',
      expected,
      expectedBasis,
    },
    skippedManifests: skipped,
  };
}

function counts(scan: Awaited<ReturnType<typeof scanInput>>) {
  const { rows, distinct, duplicates, invalid, batches, batchSize, singles } = scan;
  return { rows, distinct, duplicates, invalid, batches, batchSize, ...(singles ? { singles } : {}) };
}

/**
 * A manifest the kit wrote, in its own place (its job's folder, its parts in it), or undefined; one that cannot be
 * believed is noted in `skipped` and never used.
 */
async function readManifest(store: Store, key: string, skipped: SkippedManifest[]): Promise<Manifest | undefined> {
  let read: Awaited<ReturnType<typeof readPlacedManifest>>;
  try {
    read = await readPlacedManifest(store, key, ReadableManifestSchema, jobManifestClaims);
  } catch (error) {
    skipped.push({ key, reason: `could not be read: ${error instanceof Error ? error.message : String(error)}` });
    return undefined;
  }
  if (read?.skipped) skipped.push({ key, reason: read.skipped });
  return read?.manifest as Manifest | undefined;
}

/**
 * Credits per distinct value (per topic for exports) over the completed jobs of a kind found under the output:
 * the account's real rate for this kind of input, including free `not_found` and `unknown` answers.
 */
async function learnRate(
  store: Store,
  kind: JobKind,
  matches: (manifest: Manifest) => boolean,
  skipped: SkippedManifest[],
): Promise<{ rate: number; jobs: number } | undefined> {
  let credits = 0;
  let units = 0;
  let jobs = 0;
  let listed = 0;
  let read = 0;
  for await (const info of store.list('')) {
    if (++listed > HISTORY_KEYS || read >= HISTORY_MANIFESTS) break;
    if (!/^[^/]+\/_manifest\.json$/.test(info.key)) continue;
    read += 1;
    const manifest = await readManifest(store, info.key, skipped);
    if (!manifest || manifest.kind !== kind || manifest.status !== 'completed' || !matches(manifest)) continue;
    const perUnit =
      kind === 'intent-export'
        ? ((manifest.details?.['request'] as { topic_ids?: unknown[] } | undefined)?.topic_ids?.length ?? 0)
        : manifest.counts.distinct;
    if (perUnit === 0) continue;
    const paid = kind === 'intent-export' ? (manifest.details?.['submit_credits'] ?? 0) : manifest.credits_charged;
    // The export's credits live in its free-form details: held to what a charge can be, like the schema's counts.
    if (typeof paid !== 'number' || !Number.isSafeInteger(paid) || paid < 0) {
      skipped.push({ key: info.key, reason: 'not a valid manifest: details.submit_credits: not a count of credits' });
      continue;
    }
    credits += paid;
    units += perUnit;
    jobs += 1;
  }
  return units > 0 ? { rate: credits / units, jobs } : undefined;
}

function sameOptions(manifest: Manifest, options: object): boolean {
  return canonical(manifest.details?.['options'] ?? {}) === canonical(options);
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined);
    return `{${entries
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

const round = (n: number) => Math.round(n * 100) / 100;
