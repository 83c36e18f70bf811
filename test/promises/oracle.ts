/**
 * The ideals a promise test compares with, computed from the sandbox's truth (sandbox/README.md "The oracle")
 * and the spec's rules, never from what the kit reports. Each ideal is what a user was promised: every distinct
 * input once, the spec's price for it, the fewest calls the spec's batch limits allow.
 */
import type { CallRecord, DomainTruth, ExportRequest, Sandbox, SignalWindow } from '../../sandbox/index.ts';

/** Spec 8: domains per bulk enrich call, addresses per bulk verify call, signals per domain. */
export const BULK_DOMAINS = 100;
export const BULK_EMAILS = 1000;
export const MAX_LIMIT = 500;
/** The sandbox's default `limit` when a call sends none (sandbox README). */
export const SANDBOX_DEFAULT_LIMIT = 100;

export const PATHS = {
  enrichBulk: '/v1/companies/enrich/bulk',
  verifyBulk: '/v1/emails/verify/bulk',
  exportSubmit: '/v1/buyer-intent/contacts/export',
} as const;

export interface EnrichIdeal {
  /** Distinct inputs as the service compares them (first occurrence kept). */
  domains: DomainTruth[];
  /** Signal ids each ok domain should have in the output: the newest `limit` visible ones. */
  signalIds: Map<string, string[]>;
  /** 2 credits per signal returned, over the distinct domains (spec 8). */
  credits: number;
  /** ceil(distinct valid domains / 100). */
  calls: number;
}

/** Bulk enrichment of `inputs` with `limit` per domain and the window's filters, at the sandbox clock. */
export function enrichIdeal(
  sandbox: Sandbox,
  inputs: string[],
  options: SignalWindow & { limit?: number } = {},
): EnrichIdeal {
  const { limit = SANDBOX_DEFAULT_LIMIT, ...window } = options;
  const seen = new Set<string>();
  const domains: DomainTruth[] = [];
  for (const t of sandbox.truth.companySignals(inputs, window)) {
    if (seen.has(t.domain)) continue;
    seen.add(t.domain);
    domains.push(t);
  }
  const signalIds = new Map<string, string[]>();
  let credits = 0;
  for (const d of domains) {
    if (d.status !== 'ok') continue;
    const kept = d.signals.slice(0, limit).map((s) => s.signal_id);
    signalIds.set(d.domain, kept);
    credits += 2 * kept.length;
  }
  const valid = domains.filter((d) => d.status !== 'invalid').length;
  return { domains, signalIds, credits, calls: Math.ceil(valid / BULK_DOMAINS) };
}

export interface VerifyIdeal {
  /** Distinct addresses (trimmed, lower-cased) with their truth. */
  emails: Map<string, { valid: boolean; result: string | undefined; credits: number }>;
  /** 1 per distinct verified address, `unknown` and invalid free (spec 8). Upstream failures are free too. */
  credits: number;
  /** ceil(distinct valid addresses / 1000): the calls with no upstream failure to retry. */
  calls: number;
}

export function verifyIdeal(sandbox: Sandbox, inputs: string[]): VerifyIdeal {
  const emails: VerifyIdeal['emails'] = new Map();
  for (const t of sandbox.truth.emailVerifications(inputs)) {
    if (emails.has(t.email)) continue;
    emails.set(t.email, { valid: t.valid, result: t.result, credits: t.credits });
  }
  let credits = 0;
  let valid = 0;
  for (const e of emails.values()) {
    credits += e.credits;
    if (e.valid) valid++;
  }
  return { emails, credits, calls: Math.ceil(valid / BULK_EMAILS) };
}

export interface ExportIdeal {
  rowCount: number;
  /** The flat rate per distinct topic, once; nothing for an export with no rows. */
  credits: number;
  /** One submit. */
  submits: number;
}

export function exportIdeal(sandbox: Sandbox, request: ExportRequest): ExportIdeal {
  const { rowCount, credits } = sandbox.truth.intentExport(request);
  return { rowCount, credits, submits: 1 };
}

/** Calls to `path` after the mark `after` (a `seq` from `sandbox.truth.lastCall()`), counted from the call record. */
export function callsTo(sandbox: Sandbox, path: string, after = 0): CallRecord[] {
  return sandbox.truth.calls({ path, after });
}

/** Credits the sandbox charged for answers it then lost (5xx or reset after the charge), after the mark. */
export function lostAnswerCredits(sandbox: Sandbox, after = 0): number {
  return sandbox.truth
    .calls({ after })
    .filter((c) => c.fault === 'lost_answer_5xx' || c.fault === 'lost_answer_reset')
    .reduce((sum, c) => sum + c.credits, 0);
}

/** Credits charged to the account after the mark, summed from the call record (equals the ledger's delta). */
export function chargedSince(sandbox: Sandbox, after = 0): number {
  return sandbox.truth.calls({ after }).reduce((sum, c) => sum + c.credits, 0);
}

/** The most calls the rate limiter accepted in any window of `windowMs` (by the limiter's own clock). */
export function maxAcceptedInWindow(calls: CallRecord[], windowMs: number): number {
  const times = calls.filter((c) => c.rateCounted).map((c) => c.realMs);
  times.sort((a, b) => a - b);
  let most = 0;
  let head = 0;
  for (let i = 0; i < times.length; i++) {
    while (times[i]! - times[head]! >= windowMs) head++;
    most = Math.max(most, i - head + 1);
  }
  return most;
}

/** The truth of one push run: the signals detected in (after, clock] (before `before` for a backfill) per domain. */
export function newSignals(
  sandbox: Sandbox,
  domains: string[],
  window: { detected_after?: string | number; detected_before?: string | number; signal_types?: string[] },
): { ids: string[]; perDomain: Map<string, number>; valid: number } {
  const truth = sandbox.truth.companySignals(domains, window);
  const perDomain = new Map<string, number>();
  for (const t of truth) if (t.status === 'ok') perDomain.set(t.domain, t.signals.length);
  return {
    ids: truth.flatMap((t) => t.signals.map((s) => s.signal_id)),
    perDomain,
    valid: truth.filter((t) => t.status !== 'invalid').length,
  };
}

/**
 * The calls a push run may make: one per 100 distinct domains, one more when the leftovers of several watermark
 * groups or new domains share a call, and the catch-up calls for the domains that had more new signals than `limit`.
 */
export function allowedCalls(valid: number, overLimit: number): number {
  return Math.ceil(valid / BULK_DOMAINS) + 1 + Math.ceil(overLimit / BULK_DOMAINS);
}
