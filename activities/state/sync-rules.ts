import { z } from 'zod';
import type { CompanyAnswer, HeldSignal } from '../sync/types.ts';

/**
 * What a company's state may hold, and how a night's answer is taken into it. A state is read under these rules
 * (`sync-db.ts`, `sync-state.ts`): a time later than the night's time plus `STATE_CLOCK_SKEW_MS`, a count that is not a
 * non-negative integer, a field of the wrong shape, and the whole state is ignored (the night priced as a fresh one).
 */

/** Remembered signal ids reach this far below a company's complete-through time. */
export const RETENTION_DAYS = 90;
const RETENTION_MS = RETENTION_DAYS * 86_400_000;
/**
 * How far past the night's scheduled time a time in the state may be: a night's answers are complete through its
 * scheduled time, or through a signal the service dated later while the night ran (a night of a million accounts
 * runs for hours), so a day.
 */
export const STATE_CLOCK_SKEW_MS = 86_400_000;

export interface CompanyState {
  status: 'ok' | 'not_found';
  through: string | null;
  company?: CompanyAnswer['company'];
  /** A contact's person fields (contacts syncs). */
  contact?: Record<string, unknown>;
  counts: Record<string, number>;
  newest: HeldSignal | null;
  /** `[signal_id, detected_at]` of held signals within the retention window. */
  ids: [string, string][];
}

/** The latest time a state read by the night at `nightAt` may hold (ms since the epoch). */
export const latestTimeAllowed = (nightAt: string) => Date.parse(nightAt) + STATE_CLOCK_SKEW_MS;

/** A company's state as a night at `latest` (`latestTimeAllowed`) accepts it. */
export function companyStateSchema(latest: number) {
  const time = z.iso
    .datetime({ offset: true })
    .refine((value) => Date.parse(value) <= latest, "later than the night's time plus the allowed skew");
  const signal = z.object({
    signal_id: z.string(),
    signal_type: z.string(),
    detected_at: time,
    data: z.object({ summary: z.string().optional() }).optional(),
  });
  return z.object({
    status: z.enum(['ok', 'not_found']),
    through: time.nullable(),
    company: z
      .object({ name: z.string().optional(), domain: z.string().optional(), linkedin_url: z.string().optional() })
      .optional(),
    contact: z.record(z.string(), z.unknown()).optional(),
    counts: z.record(z.string(), z.number().int().nonnegative()),
    newest: signal.nullable(),
    ids: z.array(z.tuple([z.string(), time])),
  });
}

/**
 * Takes one call's answer for a company into its state: new signals counted once (by id), the newest kept, and the
 * company complete through the run's scheduled time (`asOf`: the call was made after it, so every signal detected up
 * to then was there to be returned), or through its newest signal if that is later. Returns how many were new.
 *
 * A signal at or before the time the company is complete through is held already, whether or not its id is still
 * remembered (ids older than the retention window are forgotten): an answer taken in twice counts nothing twice.
 */
export function mergeAnswer(
  held: CompanyState | undefined,
  answer: CompanyAnswer,
  asOf: string,
): { state: CompanyState | undefined; added: number } {
  if (answer.status === 'error') return { state: held, added: 0 };
  const state: CompanyState = held
    ? { ...held, counts: { ...held.counts }, ids: [...held.ids] }
    : { status: answer.status, through: null, counts: {}, newest: null, ids: [] };
  if (answer.status === 'ok') state.status = 'ok';
  if (answer.company) state.company = answer.company;
  if (answer.contact) state.contact = answer.contact;
  const known = new Set(state.ids.map(([id]) => id));
  let added = 0;
  for (const signal of answer.signals) {
    if (known.has(signal.signal_id)) continue;
    if (state.through !== null && Date.parse(signal.detected_at) <= Date.parse(state.through)) continue;
    known.add(signal.signal_id);
    added += 1;
    state.counts[signal.signal_type] = (state.counts[signal.signal_type] ?? 0) + 1;
    state.ids.push([signal.signal_id, signal.detected_at]);
    if (!state.newest || Date.parse(signal.detected_at) > Date.parse(state.newest.detected_at)) state.newest = signal;
  }
  const candidates = [state.through, asOf, state.newest?.detected_at ?? null].filter(
    (value): value is string => value !== null,
  );
  state.through = new Date(Math.max(...candidates.map((value) => Date.parse(value)))).toISOString();
  const floor = Date.parse(state.through) - RETENTION_MS;
  state.ids = state.ids.filter(([, at]) => Date.parse(at) >= floor);
  return { state, added };
}
