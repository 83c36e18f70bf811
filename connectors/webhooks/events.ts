/**
 * The `signal.created` webhook event (spec section 6), parsed tolerantly: unknown fields are kept at every level,
 * optional fields may be absent, `detected_at` may use `Z` or an offset with or without milliseconds, the signal id
 * may be `sig_<hex>` or a UUID. `normalizeSignalEvent` writes the one form the kit emits (UTC `Z` timestamps,
 * lower-case domains).
 */
import { z } from 'zod';

export const SIGNAL_CREATED = 'signal.created';

/** Characters a signal id may hold: it becomes part of a workflow id (`signal-<id>`) and of object keys. */
export const SIGNAL_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,199}$/;

const datetime = z.iso.datetime({ offset: true, local: false });

export const SignalCompanySchema = z.looseObject({
  name: z.string().nullish(),
  domain: z.string().min(1),
});

export const EventSignalSchema = z.looseObject({
  id: z.string().regex(SIGNAL_ID_PATTERN, 'must be 1..200 characters of letters, digits, _ . : -'),
  type: z.string().min(1),
  company: SignalCompanySchema,
  title: z.string().nullish(),
  detected_at: datetime,
  source: z.string().nullish(),
  data: z.looseObject({}).nullish(),
});

export const SignalCreatedEventSchema = z.looseObject({
  event: z.literal(SIGNAL_CREATED),
  signal: EventSignalSchema,
  webhook_id: z.string().nullish(),
  delivered_at: datetime.nullish(),
});

/** Any event: only `event` is required, so kinds other than `signal.created` can be recognised and skipped. */
export const AnyEventSchema = z.looseObject({ event: z.string().min(1) });

export type SignalCreatedEvent = z.infer<typeof SignalCreatedEventSchema>;

/** `2026-03-01T12:00:00.000+00:00` → `2026-03-01T12:00:00Z` (milliseconds kept only when not zero). */
export function toUtcZ(value: string): string {
  const ms = Date.parse(value);
  if (!Number.isFinite(ms)) return value;
  const iso = new Date(ms).toISOString();
  return iso.endsWith('.000Z') ? `${iso.slice(0, -5)}Z` : iso;
}

/** The normalized form the kit writes: timestamps in UTC `Z`, lower-case domain; every other field unchanged. */
export function normalizeSignalEvent(event: SignalCreatedEvent): SignalCreatedEvent {
  return {
    ...event,
    signal: {
      ...event.signal,
      company: { ...event.signal.company, domain: event.signal.company.domain.trim().toLowerCase() },
      detected_at: toUtcZ(event.signal.detected_at),
    },
    ...(event.delivered_at ? { delivered_at: toUtcZ(event.delivered_at) } : {}),
  };
}

/** The workflow id of the durable workflow that handles one signal. */
export function signalWorkflowId(signalId: string): string {
  return `signal-${signalId}`;
}

export interface SchemaProblem {
  field: string;
  message: string;
}

/** The first problem of a zod error as a dotted field path (`signal.company.domain`) and a message. */
export function firstProblem(error: z.ZodError): SchemaProblem {
  const issue = error.issues[0];
  if (!issue) return { field: '', message: 'invalid event' };
  const field = issue.path.map((p) => (typeof p === 'number' ? `[${p}]` : String(p))).join('.');
  return { field, message: issue.message };
}
