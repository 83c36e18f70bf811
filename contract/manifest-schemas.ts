/**
 * The output contract: what a job's lines and the manifest of each kind of run (a job, a push run, a feed run, a sync
 * night) look like, as zod schemas. The JSON Schemas shipped in `schemas/` are generated from these (`npm run
 * schemas`), and a test keeps them current.
 *
 * Readers must ignore fields they do not know: new fields may appear within a `schema_version`. Removing or
 * renaming a field, or changing its meaning, raises `schema_version`.
 */
import { z } from 'zod';
import { FEED_KINDS, JOB_KINDS, SYNC_KIND } from './kinds.ts';
import { TABLE_NAMES } from './tables/columns.ts';
import { TABLE_SCHEMAS } from './tables/schemas.ts';

/** `schema_version` of the manifests written now. */
export const MANIFEST_SCHEMA_VERSION = 2;

type KnownKeys<T> = keyof { [K in keyof T as string extends K ? never : K]: 0 };

/**
 * What a writer builds of a schema's output: the loose objects' index signatures (there so that readers keep the
 * fields they do not know) removed, so that a misspelt field is a type error; a plain record stays a record.
 */
export type Written<T> = T extends readonly (infer U)[]
  ? Written<U>[]
  : T extends object
    ? [KnownKeys<T>] extends [never]
      ? T
      : { [K in keyof T as string extends K ? never : K]: Written<T[K]> }
    : T;

const count = z.int().nonnegative();
const row = z.int().positive().describe('1-based data row of the input (the CSV header is not counted)');
const timestamp = z.iso.datetime().describe('ISO 8601, UTC, with Z');
const recordError = z.looseObject({ code: z.string(), message: z.string() });

/** What every line carries of its input row, so a line can be joined back to the record it came from. */
const record = {
  record_id: z
    .string()
    .nullable()
    .describe(
      "the row's id in the system it came from (its id column: Id, Record ID, ... or --id-column); null without one",
    ),
  columns: z
    .record(z.string(), z.string())
    .optional()
    .describe('the input columns kept with --keep-columns, by their header as the input spelled it; absent when none'),
};

const invalidLine = z
  .looseObject({
    status: z.literal('invalid'),
    row,
    ...record,
    raw: z.unknown().describe('the row as read (long values cut)'),
    error: z.string().describe('why the row holds no usable value'),
  })
  .describe('An input row without a usable value; it was never sent.');

/** A job's output line: one of `lines` by `status`, or an input row without a usable value. */
function lineSchema<const T extends readonly [z.core.$ZodTypeDiscriminable, ...z.core.$ZodTypeDiscriminable[]]>(
  title: string,
  lines: T,
) {
  return z.discriminatedUnion('status', [...lines, invalidLine] as const).meta({ title });
}

/** A value the service did not answer for; `failure` says what failed. */
function errorLine<const S extends z.ZodRawShape>(value: S, failure: string) {
  return z
    .looseObject({ ...value, status: z.literal('error'), row, ...record, input: z.string(), error: recordError })
    .describe(`${failure}; a re-run of the job tries it again.`);
}

const duplicateOf = z.int().positive().describe('the `row` of the line that holds the answer');

const company = z.looseObject({ name: z.string().optional(), domain: z.string().optional() });

const signal = z.looseObject({
  signal_id: z.string(),
  signal_type: z.string(),
  signal_subtype: z.string().optional(),
  signal_name: z.string().optional(),
  detected_at: timestamp,
  association: z.string().optional(),
  company: company.optional(),
  data: z.looseObject({ summary: z.string().optional() }),
});

const matchedBy = z
  .enum(['domain', 'linkedin_url', 'company_name'])
  .describe(
    'which identifier of the row was sent: its domain or website, else its LinkedIn company URL, else its name',
  );
const resolvedDomain = z
  .string()
  .nullable()
  .describe('the root domain of the company the service matched (lower case); null when it matched none');

/**
 * The lines of a job whose rows each name one thing the service looks up (a company, a person): its answer, not
 * found, a duplicate of another row (its answer's headline, no signals), or an error. `domain` is the domain the
 * service resolved; `matchedBy` which of the row's identifiers was sent.
 */
function lookupLines<const M extends z.ZodType, const A extends z.ZodRawShape>(
  domain: z.ZodType,
  matchedBy: M,
  answer: { fields: A; description: string },
  texts: { notFound: string; duplicate: string; duplicateStatus: z.ZodType; error: string },
) {
  const rowFields = {
    row,
    ...record,
    matched_by: matchedBy,
    input: z.string().describe('the identifier as the input had it'),
  };
  return [
    z.looseObject({ domain, status: z.literal('ok'), ...rowFields, ...answer.fields }).describe(answer.description),
    z.looseObject({ domain, status: z.literal('not_found'), ...rowFields }).describe(texts.notFound),
    z
      .looseObject({
        domain,
        status: z.literal('duplicate'),
        ...rowFields,
        duplicate_of: duplicateOf,
        answer_status: texts.duplicateStatus,
        company: company.optional(),
        signal_summary: z.record(z.string(), count).optional(),
      })
      .describe(texts.duplicate),
    errorLine({ domain, matched_by: matchedBy }, texts.error),
  ] as const;
}

export const EnrichLineSchema = lineSchema(
  'signal-kit enrich output line',
  lookupLines(
    resolvedDomain,
    matchedBy,
    {
      fields: {
        company,
        signals: z.array(signal),
        signal_summary: z.record(z.string(), count).optional(),
        coverage: z.looseObject({}).optional(),
      },
      description: 'The company and its signals.',
    },
    {
      notFound: 'The service knows no company by this identifier (free).',
      duplicate:
        "A row naming a company another row already names: its answer is that line's (not paid again); no signals array.",
      duplicateStatus: z
        .enum(['ok', 'not_found', 'error'])
        .optional()
        .describe("the answering line's status; absent while that line has none (its batch not run yet)"),
      error: 'The company could not be enriched',
    },
  ),
);

const contactMatchedBy = z
  .enum(['email', 'linkedin_url'])
  .describe("which identifier of the row was sent: the person's email, else their LinkedIn profile URL");
const employerDomain = z
  .string()
  .nullable()
  .describe("the root domain of the person's employer as the service resolved it; null when it found no person");

export const EnrichContactsLineSchema = lineSchema(
  'signal-kit enrich-contacts output line',
  lookupLines(
    employerDomain,
    contactMatchedBy,
    {
      fields: {
        contact: z.looseObject({}).describe('the person as the service knows them (spec 2.5)'),
        company: company.optional().describe('the employer the service resolved'),
        signals: z.array(signal).describe('person-level signals, newest first (at most --limit)'),
        signal_summary: z.record(z.string(), count).optional(),
        total: count.optional().describe('person-level signals matching the filters, before --limit'),
        coverage: z.looseObject({}).optional(),
      },
      description: 'The person, their employer and their signals.',
    },
    {
      notFound: 'The service knows no person by this identifier (free).',
      duplicate: "A row naming a person another row already names: its answer is that line's (not paid again).",
      duplicateStatus: z.enum(['ok', 'not_found', 'error']).optional(),
      error: 'The person could not be enriched',
    },
  ),
);

const emailValue = z.string().describe('the normalized address (trimmed, lower case)');

export const VerifyEmailsLineSchema = lineSchema('signal-kit verify-emails output line', [
  z
    .looseObject({
      email: emailValue,
      status: z.literal('ok'),
      row,
      ...record,
      input: z.string(),
      result: z.enum(['deliverable', 'undeliverable', 'risky', 'unknown']),
      confidence: z.number().min(0).max(1).optional(),
      reason: z.string().optional(),
      risk_level: z.string().optional(),
      details: z.looseObject({}).optional(),
      validated_at: timestamp.optional(),
    })
    .describe('The verification of one distinct address.'),
  z
    .looseObject({
      email: emailValue,
      status: z.literal('duplicate'),
      row,
      ...record,
      input: z.string(),
      duplicate_of: duplicateOf,
      answer_status: z.enum(['ok', 'error']).optional(),
      result: z.enum(['deliverable', 'undeliverable', 'risky', 'unknown']).optional(),
    })
    .describe('An address another row already holds (the service treats them as one): verified once, not paid again.'),
  errorLine({ email: emailValue }, 'The address could not be verified'),
]);

export const IntentExportLineSchema = z
  .looseObject({
    topic_id: z.string().regex(/^b2b_\d+$/),
    intent_score: z.number().optional(),
    contact: z.looseObject({}),
    company: z.looseObject({}).optional(),
  })
  .meta({
    title: 'signal-kit intent-export output line',
    description: 'One buyer-intent contact, as the service exported it (the kit stores the download unchanged).',
  });

const outputUrl = z
  .string()
  .describe('the output URL written under (file://, s3:// or gs://): every part key is relative to it');

/** One object a manifest lists: where it is, its size and hash, and which table in which format it holds. */
export const ManifestPartSchema = z.looseObject({
  key: z.string().describe('relative to `output`'),
  lines: count,
  bytes: count,
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  table: z
    .enum(['lines', ...TABLE_NAMES])
    .optional()
    .describe(
      'lines: the output lines (nested JSON); rows, signals, invalid (jobs, pushes), companies, contacts (feeds): a flat table (docs/tables.md)',
    ),
  format: z.enum(['jsonl', 'csv', 'parquet']).optional(),
});

/**
 * A manifest, found at `path`: written last, so only the parts it lists are complete; `error` and `details` say why
 * a failed job or run failed.
 */
function manifestSchema<const S extends z.ZodRawShape>(title: string, path: string, fields: S) {
  return z
    .looseObject({ ...fields, error: z.string().optional(), details: z.record(z.string(), z.unknown()).optional() })
    .meta({ title, description: `${path}, written last: only the parts it lists are complete.` });
}

const summary = z.object({ total: count, deliverable: count, undeliverable: count, risky: count, unknown: count });

/** A job's or a push run's paid calls whose answer was not saved (docs/paid-answers.md). */
const unsavedAnswers = z
  .looseObject({
    credits: count,
    unknown_calls: count,
    from_balances: z
      .object({ calls: count, credits: count, exact_unless_account_charged_elsewhere: z.literal(true) })
      .optional()
      .describe(
        'calls whose answer nobody read (a worker killed after the service answered), their cost reconciled from the ' +
          'balances the service reported (x-credits-remaining) and counted in credits: exact when nothing else charged ' +
          "the account between the run's first and last answered call, at most this otherwise",
      ),
  })
  .optional()
  .describe('calls the service answered (and may have charged) whose answer the kit never saved');

export const ManifestSchema = manifestSchema('signal-kit job manifest', '<output>/<job id>/_manifest.json', {
  schema_version: z.literal(MANIFEST_SCHEMA_VERSION),
  job_id: z.string(),
  kind: z.enum(JOB_KINDS),
  input: z.string().nullable().describe('the input URL; null for an export'),
  output: outputUrl,
  status: z.enum(['completed', 'completed_with_errors', 'budget_exhausted', 'failed']),
  started_at: timestamp,
  finished_at: timestamp,
  counts: z.looseObject({
    input_rows: count,
    distinct: count,
    duplicates: count,
    ok: count,
    not_found: count,
    error: count,
    invalid: count,
    lines: count,
    skipped_lines: count
      .optional()
      .describe("lines of the input that are no records: blank lines and a report's footer (never rows, never paid)"),
  }),
  summary: summary.optional().describe('verify-emails: results of the distinct addresses'),
  credits_charged: count,
  calls: z
    .looseObject({
      bulk: count.describe('bulk calls answered (companies by domain, or addresses)'),
      single: count.describe('single-company calls answered (rows identified by LinkedIn URL or name)'),
    })
    .optional()
    .describe('enrich and verify-emails: API calls whose answer was saved'),
  overlap: z
    .looseObject({
      companies: count.describe('companies paid for twice: once by name or LinkedIn URL, once more by domain'),
      credits: count.describe('of credits_charged: what the second payment cost'),
    })
    .optional()
    .describe('enrich: a company named two ways by different rows, paid for more than once'),
  columns: z
    .looseObject({
      domain: z.string().optional(),
      linkedin_url: z.string().optional(),
      company_name: z.string().optional(),
      email: z.string().optional(),
      record_id: z.string().optional(),
      kept: z.array(z.string()),
    })
    .optional()
    .describe('the input column chosen for each role, as the input spelled its header'),
  unsaved_answers: unsavedAnswers,
  batches: z.looseObject({ total: count, done: count, failed: count }),
  parts: z.array(ManifestPartSchema),
  rows_csv: ManifestPartSchema.optional().describe(
    "with --format csv: the CRM import file (not a part: not in parts): one row per input row, in input order; the record id under the input's own header, the CRM update and kept columns, then the rows table's columns named for the CRM (docs/crm-round-trip.md)",
  ),
});

export const PushSignalLineSchema = signal
  .extend({ domain: z.string().describe('the watchlist domain (normalized) the signal was found for') })
  .meta({
    title: 'signal-kit scheduled-push output line',
    description: 'One signal not pushed before, as the service returned it, with the watchlist domain it belongs to.',
  });

const day = z.string().regex(/^\d{4}-\d{2}-\d{2}$/);

export const PushManifestSchema = manifestSchema(
  'signal-kit scheduled-push run manifest',
  '<output>/<name>/signals/dt=<date>/run-<id>/_manifest.json',
  {
    schema_version: z.literal(MANIFEST_SCHEMA_VERSION),
    name: z.string().describe('the push (and its schedule)'),
    run_id: z.string().describe('from the scheduled time, e.g. 20260301T060000Z: a retried run keeps it'),
    dt: day.describe('the dt= partition: the UTC date of the scheduled time'),
    scheduled_at: timestamp,
    started_at: timestamp,
    finished_at: timestamp,
    status: z.enum(['completed', 'completed_with_errors', 'budget_exhausted', 'failed']),
    watchlist: z.string().describe('the watchlist URL'),
    output: outputUrl,
    mode: z.enum(['incremental', 'full_refresh', 'backfill']),
    window: z.looseObject({ from: timestamp, to: timestamp }).optional().describe('backfill: the window [from, to)'),
    lookback_ms: count.optional(),
    counts: z.looseObject({
      input_rows: count,
      distinct: count,
      duplicates: count,
      invalid: count,
      domains: count.describe('domains answered in this run: ok + not_found + error'),
      ok: count,
      not_found: count,
      error: count,
      signals: count.describe('lines written: one per new signal'),
      incomplete: count.describe('domains not complete after this run'),
    }),
    credits_charged: count,
    unsaved_answers: unsavedAnswers,
    overlap: z
      .looseObject({ signals: count, credits: count })
      .describe('of credits_charged: signals paid for and not written (already pushed, or outside the window)'),
    calls: z.looseObject({ total: count, first_round: count, catch_up: count }),
    batches: z.looseObject({ total: count, done: count, failed: count }),
    parts: z.array(ManifestPartSchema),
    incomplete_domains: z
      .array(
        z.looseObject({
          domain: z.string(),
          reason: z.enum(['behind', 'unreachable']),
          missing: count.optional(),
        }),
      )
      .describe('up to 100 of the domains counted in counts.incomplete'),
    errors: z
      .array(z.looseObject({ domain: z.string(), code: z.string(), message: z.string() }))
      .describe('up to 100 per-domain errors'),
    invalid_rows: z
      .array(z.looseObject({ row, raw: z.unknown(), error: z.string() }))
      .describe('up to 100 watchlist rows without a usable domain'),
    watermarks: z.looseObject({
      key: z.string(),
      from_run: z.string().nullable(),
      domains_advanced: count,
      committed: z.boolean().describe('false for a backfill, which never moves the watermarks'),
    }),
  },
);

const searchFilters = z.record(z.string(), z.unknown()).describe('search filters, in the API field names');

export const FeedLineSchema = z
  .looseObject({
    key: z
      .string()
      .describe(
        'what the feed remembers it delivered: domain:<domain> (companies), email:<address>, linkedin:<profile> or ' +
          'name:<name>@<domain> (people), prefixed by <topic_id>| for buyer intent',
      ),
    domain: z.string().optional().describe('company-search: the company (with name, signal_count, industries)'),
    contact: z.looseObject({}).optional().describe('contact-search and intent-contacts: the person'),
    company: z.looseObject({}).optional().describe("contact-search and intent-contacts: the person's employer"),
    topic_id: z.string().optional().describe('intent-contacts: the topic the person shows intent on'),
    intent_score: z.number().optional(),
    latest_signal_at: z.string().optional().describe('search: when the newest matching signal was detected'),
    latest_signal_id: z.string().optional().describe('search: the id of the newest matching signal'),
  })
  .meta({
    title: 'signal-kit scheduled-feed output line',
    description: 'One company or person not delivered before (search: or with a newer matching signal), as answered.',
  });

export const FeedManifestSchema = manifestSchema(
  'signal-kit scheduled-feed run manifest',
  '<output>/<name>/<companies|contacts>/dt=<date>/run-<id>/_manifest.json',
  {
    schema_version: z.literal(MANIFEST_SCHEMA_VERSION),
    name: z.string().describe('the feed (and its schedule)'),
    kind: z.enum(FEED_KINDS),
    run_id: z.string().describe('from the scheduled time: a retried run keeps it'),
    dt: day.describe('the dt= partition: the UTC date of the scheduled time'),
    output: outputUrl,
    scheduled_at: timestamp,
    started_at: timestamp,
    finished_at: timestamp,
    status: z.enum(['completed', 'completed_with_errors', 'budget_exhausted', 'failed']),
    filters: searchFilters,
    detected_after: z.string().nullable().describe('the lower time bound of every search call (null: intent)'),
    counts: z.looseObject({
      returned: count.describe('items in the answers, with repeats across slices or pages'),
      distinct: count,
      new: count.describe('lines written'),
      already_delivered: count,
    }),
    credits_charged: count,
    unsaved_answers: unsavedAnswers,
    calls: count,
    slices: z.looseObject({ total: count, split: count }).optional(),
    incomplete: z
      .array(
        z.looseObject({
          filters: searchFilters.optional(),
          via: z.string().optional(),
          reason: z.enum(['capped', 'budget', 'failed', 'slice_limit']),
          returned: count.optional(),
        }),
      )
      .describe('what the run could not complete (up to 100); empty when complete'),
    parts: z.array(ManifestPartSchema),
    state: z.looseObject({ key: z.string(), from_run: z.string().nullable(), keys_advanced: count }),
  },
);

/** What a sync night's manifest says of its write-back to the CRM (`schedule create --write-back`). */
const WriteBackSectionSchema = z.looseObject({
  crm: z.enum(['hubspot', 'salesforce']),
  object: z.string().optional().describe('the CRM object written: companies, contacts, Account, Contact or Lead'),
  status: z
    .enum(['done', 'failed'])
    .describe(
      'done: every record of the night has its outcome in writeback.csv; failed: see error (nothing of the night confirmed is lost: what was not confirmed stays pending)',
    ),
  written: count
    .optional()
    .describe('records the CRM confirmed (those it had confirmed before with the same values included)'),
  rejected: count.optional().describe("records the CRM refused, each with the CRM's code and message in writeback.csv"),
  transient: count.optional().describe('of rejected: refusals tried again next night (a locked row, a timeout, a 5xx)'),
  not_attempted: count
    .optional()
    .describe('records not sent (cut short, a spent daily limit, or fill-empty left nothing to write)'),
  carried: count.optional().describe('of the records tonight: those an earlier night left pending'),
  kept: count.optional().describe('records fill-empty left as the CRM had them (a value a person set)'),
  truncated: count.optional().describe("text values cut to the CRM field's length"),
  pending: count
    .optional()
    .describe('records still pending after tonight: the next night writes them first (failed: when the ledger says)'),
  report: ManifestPartSchema.optional().describe('writeback.csv: one line per record, its outcome and the CRM error'),
  error: z.string().optional().describe('failed: why (never a token)'),
});

const recordIds = (which: string) =>
  z.array(z.string()).describe(`the records ${which}, by their id as the export wrote it (else their identifier)`);

export const SyncManifestSchema = manifestSchema(
  'signal-kit CRM sync night manifest',
  '<output>/<name>/runs/dt=<date>/run-<id>/_manifest.json',
  {
    schema_version: z.literal(MANIFEST_SCHEMA_VERSION),
    kind: z.literal(SYNC_KIND),
    name: z.string().describe('the sync (and its schedule)'),
    run_id: z.string().describe('from the scheduled time, e.g. 20260301T060000Z: a retried night keeps it'),
    dt: day.describe('the dt= partition: the UTC date of the scheduled time'),
    scheduled_at: timestamp,
    started_at: timestamp,
    finished_at: timestamp,
    status: z.enum(['completed', 'completed_with_errors', 'budget_exhausted', 'failed']),
    input: z.string().describe("the CRM export's URL"),
    output: outputUrl,
    rows_kind: z
      .enum(['enrich', 'enrich-contacts'])
      .optional()
      .describe(
        'whose rows table the night writes: enrich (companies) or enrich-contacts (people); absent before 2026-12',
      ),
    columns: z
      .looseObject({ kept: z.array(z.string()) })
      .optional()
      .describe("the export's columns kept in the rows (--keep-columns), as its header spells them"),
    counts: z.looseObject({
      input_rows: count,
      skipped_lines: count
        .optional()
        .describe(
          "lines of the export that are no records: blank lines and a report's footer (never rows, never paid)",
        ),
      records: count.describe('records of the export, each once in rows.csv'),
      ok: count,
      not_found: count,
      error: count,
      invalid: count,
      companies: count.describe('distinct companies the records name'),
      new_companies: count.describe('companies the state held nothing of'),
      new_signals: count.describe('signals taken into the state tonight, each once'),
    }),
    records: z
      .looseObject({
        total: count,
        new: count,
        changed: count,
        unchanged: count,
        gone: count.describe("records of the last night's export missing from tonight's"),
        ids: ManifestPartSchema.optional().describe(
          'ids.csv: the id of each new, changed and gone record (as the export wrote it, else its identifier) and which it is (change: new, changed or gone), one a line; proven as a part. Absent before 2026-12 and on a failed night that wrote no files',
        ),
        new_ids: recordIds('new since the last night').optional().describe('before 2026-12 only: now in ids.csv'),
        changed_ids: recordIds('whose row differs from the last night')
          .optional()
          .describe('before 2026-12 only: now in ids.csv'),
        gone_ids: recordIds("of the last night's export missing from tonight's")
          .optional()
          .describe('before 2026-12 only: now in ids.csv'),
      })
      .describe('how the export compares with the last committed night'),
    credits_charged: count,
    unsaved_answers: unsavedAnswers,
    overlap: z
      .looseObject({ credits: count })
      .describe('of credits_charged: signals paid for that the state held already'),
    calls: count.describe('API calls whose answer was saved'),
    batches: z.looseObject({ total: count, done: count }),
    parts: z
      .array(ManifestPartSchema)
      .describe(
        'rows.csv (every record once), changes.csv (the new and changed records), and the rows table in the --formats asked (tables/rows/part-NNNNN.<ext>, 50,000 rows each); all of table rows',
      ),
    gone: ManifestPartSchema.optional().describe(
      "gone.csv: the ids of the records of the last night's export missing from tonight's, under the export's id header, as the export wrote them; proven as a part",
    ),
    state: z
      .looseObject({
        key: z.string().describe("the sync's state pointer, <name>/_state.json"),
        from_run: z.string().nullable().describe('the night whose state this one started from; null: the first'),
        carried_from: z.string().optional().describe('a stopped night this one carried on'),
        ignored: z
          .string()
          .optional()
          .describe(
            "why the stored state was not the schedule's own and the night was priced as a fresh state (names the file, table, row and field, never a value)",
          ),
      })
      .describe('the state the night started from and commits after this manifest'),
    write_back: WriteBackSectionSchema.optional().describe(
      "the night's write-back to the CRM (--write-back), added to this manifest once it is done or has failed; absent without --write-back",
    ),
  },
);

/** The shipped JSON Schemas: file name in `schemas/` → schema. */
export const OUTPUT_SCHEMAS = {
  'manifest.schema.json': ManifestSchema,
  'enrich-line.schema.json': EnrichLineSchema,
  'enrich-contacts-line.schema.json': EnrichContactsLineSchema,
  'verify-emails-line.schema.json': VerifyEmailsLineSchema,
  'intent-export-line.schema.json': IntentExportLineSchema,
  'push-manifest.schema.json': PushManifestSchema,
  'push-signal-line.schema.json': PushSignalLineSchema,
  'feed-manifest.schema.json': FeedManifestSchema,
  'feed-line.schema.json': FeedLineSchema,
  'sync-manifest.schema.json': SyncManifestSchema,
  ...TABLE_SCHEMAS,
} as const;

/** The JSON Schema (draft 2020-12) of each output schema, with a stable `$id`. */
export function outputJsonSchemas(): Record<keyof typeof OUTPUT_SCHEMAS, Record<string, unknown>> {
  const entries = Object.entries(OUTPUT_SCHEMAS).map(([file, schema]) => {
    const { $schema, ...rest } = z.toJSONSchema(schema, { io: 'output', target: 'draft-2020-12' });
    const id = `urn:signal-kit:schema:${file.replace(/\.schema\.json$/, '')}:${MANIFEST_SCHEMA_VERSION}`;
    return [file, { $schema, $id: id, ...rest }];
  });
  return Object.fromEntries(entries) as Record<keyof typeof OUTPUT_SCHEMAS, Record<string, unknown>>;
}
