/**
 * The `signal.created` webhook event (spec section 6): the one model of it, used by the client's `parseSignalEvent`
 * and by the webhook receiver, so both give the same event for the same body.
 *
 * Tolerant in: unknown fields kept at every level, optional fields absent or null, `detected_at` and
 * `delivered_at` with `Z` or an offset, with or without milliseconds, the signal id `sig_<hex>` or a UUID (a
 * number is read as its string). Strict out (the schema's output): timestamps ISO 8601 UTC
 * (`2026-03-01T12:00:00.000Z`), the company's domain lower case and its name '' when absent, `title` falling back
 * to `data.summary` when empty, `data` always an object, `source`, `webhook_id` and `delivered_at` absent when
 * unknown.
 */
import { z } from 'zod';
import { isoDateTime, normalizeDomain, signalId, withUnknownFields } from '../signal-api/scalars.ts';

export const SIGNAL_CREATED = 'signal.created';

const EventCompanySchema = z
  .looseObject({ name: z.string().nullish(), domain: z.string().min(1) })
  .transform(({ name, domain, ...rest }) =>
    withUnknownFields({ name: name ?? '', domain: normalizeDomain(domain) }, rest),
  );

const EventSignalSchema = z
  .looseObject({
    id: signalId,
    type: z.string().min(1),
    company: EventCompanySchema,
    title: z.string().nullish(),
    detected_at: isoDateTime,
    source: z.string().nullish(),
    data: z.looseObject({}).nullish(),
  })
  .transform(({ id, type, company, title, detected_at, source, data, ...rest }) => {
    const summary = typeof data?.['summary'] === 'string' ? data['summary'] : '';
    const known = {
      id,
      type,
      company,
      title: title && title.trim() !== '' ? title : summary,
      detected_at,
      ...(source === null || source === undefined ? {} : { source }),
      data: { ...data } as Record<string, unknown>,
    };
    return withUnknownFields(known, rest);
  });

/** A delivered `signal.created` event; its output is the normalized event the kit hands on. */
export const SignalCreatedEventSchema = z
  .looseObject({
    event: z.literal(SIGNAL_CREATED),
    signal: EventSignalSchema,
    webhook_id: z.string().nullish(),
    delivered_at: isoDateTime.nullish(),
  })
  .transform(({ event, signal, webhook_id, delivered_at, ...rest }) => {
    const known = {
      event,
      signal,
      ...(webhook_id === null || webhook_id === undefined ? {} : { webhook_id }),
      ...(delivered_at === null || delivered_at === undefined ? {} : { delivered_at }),
    };
    return withUnknownFields(known, rest);
  });

export type SignalCreatedEvent = z.output<typeof SignalCreatedEventSchema>;

/** Any event: only `event` is required, so kinds other than `signal.created` can be recognised and skipped. */
export const AnyEventSchema = z.looseObject({ event: z.string().min(1) });

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
