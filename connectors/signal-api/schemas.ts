/**
 * Tolerant zod schemas for what the Signal Data Service sends.
 *
 * "Tolerant in": every variant the spec admits parses (`sig_` or UUID ids, `Z` or `+00:00` timestamps with or
 * without milliseconds, optional fields absent or null, numbers sent as numeric strings), and unknown fields are
 * kept (`z.looseObject`). Only what the kit cannot work without is required. The strict, normalized output is
 * made from these parses in `normalize.ts`.
 */
import { z } from 'zod';
import { dateTime, id, num } from './scalars.ts';

const strings = z.array(z.string());
const optString = z.string().nullish();
const optNum = num.nullish();
const optDate = dateTime.nullish();

// ─── signals ─────────────────────────────────────────────────────────────────────────────────────────────────

export const CompanySchema = z.looseObject({
  name: optString,
  domain: z.string(),
  linkedin_url: optString,
  industries: strings.nullish(),
  employee_count_low: optNum,
  employee_count_high: optNum,
  revenue: z.union([z.string(), z.number()]).nullish(),
  description: optString,
});

export const SignalDataSchema = z.looseObject({ summary: optString });

export const SignalSchema = z.looseObject({
  signal_id: id,
  signal_type: z.string(),
  signal_subtype: optString,
  signal_name: optString,
  detected_at: dateTime,
  association: optString,
  company: CompanySchema.nullish(),
  data: SignalDataSchema.nullish(),
});

export const CoverageSchema = z.looseObject({
  total_before_filters: optNum,
  total_after_filters: optNum,
  signal_types_available: strings.nullish(),
  date_range: z.looseObject({ earliest: optDate, latest: optDate }).nullish(),
});

const signalSummary = z.record(z.string(), num);

export const CompanyEnrichSchema = z.looseObject({
  company: CompanySchema,
  signals: z.array(SignalSchema).nullish(),
  signal_summary: signalSummary.nullish(),
  coverage: CoverageSchema.nullish(),
});

export const LegacyEnrichSchema = z.looseObject({
  domain: z.string(),
  company: z.union([z.string(), z.looseObject({ name: optString })]).nullish(),
  industry: optString,
  employee_count: optNum,
  funding: z.looseObject({}).nullish(),
  signals: z
    .array(
      z.looseObject({
        type: z.string(),
        subtype: optString,
        id: id.nullish(),
        date: optDate,
        detected_at: optDate,
        summary: optString,
        title: optString,
      }),
    )
    .nullish(),
  signal_count: optNum,
  last_updated: optDate,
});

export const ContactSchema = z.looseObject({
  first_name: optString,
  last_name: optString,
  full_name: optString,
  email: optString,
  job_title: optString,
  linkedin_url: optString,
  city: optString,
  state: optString,
  country: optString,
});

export const ContactEnrichSchema = z.looseObject({
  contact: ContactSchema,
  company: CompanySchema.nullish(),
  contact_signals: z.array(SignalSchema).nullish(),
  signal_summary: signalSummary.nullish(),
  total: optNum,
  coverage: CoverageSchema.nullish(),
});

// ─── bulk enrich ─────────────────────────────────────────────────────────────────────────────────────────────

export const BulkEnrichItemSchema = z.looseObject({
  domain: z.string(),
  status: optString,
  company: CompanySchema.nullish(),
  signals: z.array(SignalSchema).nullish(),
  signal_summary: signalSummary.nullish(),
  coverage: CoverageSchema.nullish(),
  error: z.union([z.looseObject({ code: optString, message: optString }), z.string()]).nullish(),
});

export const BulkEnrichSchema = z.looseObject({
  results: z.array(BulkEnrichItemSchema),
  summary: z
    .looseObject({ requested: optNum, ok: optNum, not_found: optNum, error: optNum, signals: optNum })
    .nullish(),
});

// ─── search ──────────────────────────────────────────────────────────────────────────────────────────────────

export const CompanySearchSchema = z.looseObject({
  companies: z.array(
    z.looseObject({
      name: optString,
      domain: z.string(),
      signal_count: optNum,
      latest_signal_at: optDate,
      industries: strings.nullish(),
    }),
  ),
  count: optNum,
});

export const ContactSearchSchema = z.looseObject({
  contacts: z.array(
    z.looseObject({
      contact: ContactSchema,
      company: CompanySchema.nullish(),
      signal_count: optNum,
      latest_signal_at: optDate,
    }),
  ),
  count: optNum,
});

// ─── lookups ─────────────────────────────────────────────────────────────────────────────────────────────────

export const SignalTypeSchema = z.looseObject({
  signal_type: z.string(),
  category: optString,
  description: optString,
  subtypes: z.array(z.union([z.string(), z.looseObject({ name: z.string() })])).nullish(),
  signal_count: optNum,
});

/** `{ types: [...] }`, or a bare array of types. */
export const SignalTypesSchema = z.union([
  z.looseObject({ types: z.array(SignalTypeSchema) }),
  z.array(SignalTypeSchema).transform((types) => ({ types })),
]);

export const StatsSchema = z.looseObject({
  total_signals: optNum,
  total_companies: optNum,
  by_type: z.record(z.string(), num).nullish(),
  freshness: z.looseObject({ latest_detected_at: optDate, median_age_hours: optNum }).nullish(),
  generated_at: optDate,
});

// ─── buyer intent ────────────────────────────────────────────────────────────────────────────────────────────

export const BuyerIntentContactSchema = z.looseObject({
  topic_id: z.string(),
  intent_score: num,
  contact: z.looseObject({
    first_name: optString,
    last_name: optString,
    email: optString,
    email_validation_status: optString,
    job_title: optString,
    linkedin_url: optString,
  }),
  company: z.looseObject({ name: optString, domain: optString, industry: optString }).nullish(),
});

const cursor = z.union([z.string(), z.number()]).nullish();

export const BuyerIntentPageSchema = z.looseObject({
  contacts: z.array(BuyerIntentContactSchema),
  count: optNum,
  page_size: optNum,
  next_cursor: cursor,
});

export const TopicsPageSchema = z.looseObject({
  topics: z.array(z.looseObject({ topic_id: z.string(), name: optString, category: optString })),
  next_cursor: cursor,
});

export const IntentExportSchema = z.looseObject({
  export_id: id.optional(),
  id: id.optional(),
  // The spec shows no submit or poll body: only the id is required, so a paid export is never lost to its shape.
  status: optString,
  created_at: optDate,
  updated_at: optDate,
  row_count: optNum,
  download_url: optString,
  expires_at: optDate,
  error: z.union([z.looseObject({ code: optString, message: optString }), z.string()]).nullish(),
});

// ─── email verification ──────────────────────────────────────────────────────────────────────────────────────

export const EmailVerificationSchema = z.looseObject({
  email: z.string(),
  result: z.string(),
  confidence: optNum,
  reason: optString,
  risk_level: optString,
  details: z
    .looseObject({
      is_free_provider: z.boolean().nullish(),
      is_disposable: z.boolean().nullish(),
      is_role_account: z.boolean().nullish(),
      is_catch_all: z.boolean().nullish(),
      has_mx_record: z.boolean().nullish(),
      email_provider: optString,
      domain_age_days: optNum,
      suggested_correction: optString,
    })
    .nullish(),
  validated_at: optDate,
});

/** `{ result: <verification> }` (spec 4.12), or the verification itself. */
export const VerifyEmailSchema = z.union([
  z.looseObject({ result: EmailVerificationSchema }),
  EmailVerificationSchema.transform((result) => ({ result })),
]);

export const VerifyEmailsSchema = z.looseObject({
  verifications: z.array(EmailVerificationSchema),
  summary: z
    .looseObject({ total: optNum, deliverable: optNum, undeliverable: optNum, risky: optNum, unknown: optNum })
    .nullish(),
  errors: z
    .array(
      z.union([
        z.looseObject({ email: optString, code: optString, message: optString }),
        z.string().transform((message) => ({ message })),
      ]),
    )
    .nullish(),
  validated_at: optDate,
});

// ─── webhooks ────────────────────────────────────────────────────────────────────────────────────────────────

export const WebhookSchema = z.looseObject({
  webhook_id: id.optional(),
  id: id.optional(),
  url: z.string(),
  signal_types: strings.nullish(),
  description: optString,
  status: optString,
  secret: optString,
  created_at: optDate,
});

/** `{ webhooks: [...] }`, or a bare array. */
export const WebhookListSchema = z.union([
  z.looseObject({ webhooks: z.array(WebhookSchema) }),
  z.array(WebhookSchema).transform((webhooks) => ({ webhooks })),
]);

export const WebhookDeleteSchema = z.looseObject({
  webhook_id: id.optional(),
  id: id.optional(),
  deleted: z.boolean().nullish(),
});

export const WebhookTestSchema = z.looseObject({
  delivered: z.boolean(),
  status_code: optNum,
  attempts: optNum,
});

// ─── errors ──────────────────────────────────────────────────────────────────────────────────────────────────

/**
 * Error bodies in the forms seen in the wild: `{ error: { code, message, field, request_id } }` (the sandbox's),
 * `{ error: "message" }`, `{ code, message }`, `{ detail }`, `{ errors: [{ message, field }] }`.
 */
export const ErrorBodySchema = z.looseObject({
  error: z
    .union([
      z.string(),
      z.looseObject({
        code: z.union([z.string(), z.number()]).nullish(),
        message: optString,
        field: optString,
        request_id: optString,
      }),
    ])
    .nullish(),
  code: z.union([z.string(), z.number()]).nullish(),
  message: optString,
  detail: z.unknown().optional(),
  field: optString,
  request_id: optString,
  errors: z.array(z.unknown()).nullish(),
});

export type CompanyIn = z.output<typeof CompanySchema>;
export type SignalIn = z.output<typeof SignalSchema>;
export type CoverageIn = z.output<typeof CoverageSchema>;
export type CompanyEnrichIn = z.output<typeof CompanyEnrichSchema>;
export type LegacyEnrichIn = z.output<typeof LegacyEnrichSchema>;
export type ContactIn = z.output<typeof ContactSchema>;
export type ContactEnrichIn = z.output<typeof ContactEnrichSchema>;
export type BulkEnrichIn = z.output<typeof BulkEnrichSchema>;
export type BulkEnrichItemIn = z.output<typeof BulkEnrichItemSchema>;
export type CompanySearchIn = z.output<typeof CompanySearchSchema>;
export type ContactSearchIn = z.output<typeof ContactSearchSchema>;
export type SignalTypesIn = z.output<typeof SignalTypesSchema>;
export type StatsIn = z.output<typeof StatsSchema>;
export type BuyerIntentContactIn = z.output<typeof BuyerIntentContactSchema>;
export type BuyerIntentPageIn = z.output<typeof BuyerIntentPageSchema>;
export type TopicsPageIn = z.output<typeof TopicsPageSchema>;
export type IntentExportIn = z.output<typeof IntentExportSchema>;
export type EmailVerificationIn = z.output<typeof EmailVerificationSchema>;
export type VerifyEmailIn = z.output<typeof VerifyEmailSchema>;
export type VerifyEmailsIn = z.output<typeof VerifyEmailsSchema>;
export type WebhookIn = z.output<typeof WebhookSchema>;
export type WebhookListIn = z.output<typeof WebhookListSchema>;
export type WebhookDeleteIn = z.output<typeof WebhookDeleteSchema>;
export type WebhookTestIn = z.output<typeof WebhookTestSchema>;
export type ErrorBodyIn = z.output<typeof ErrorBodySchema>;
