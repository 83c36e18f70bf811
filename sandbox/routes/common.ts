/** Helpers shared by the route modules: response shapes built from store results. */
import type { CompanyObject, CompanyProfile } from '../data/companies.ts';
import type { SignalRecord } from '../data/signals.ts';
import { validationError } from '../errors.ts';
import type { OwnerSignals, SignalFilter } from '../store.ts';
import { isoZ } from '../time.ts';
import { asSet } from '../validation.ts';

export interface Coverage {
  total_before_filters: number;
  total_after_filters: number;
  signal_types_available: string[];
  date_range: { earliest: string | null; latest: string | null };
}

export function coverageOf(s: OwnerSignals): Coverage {
  return {
    total_before_filters: s.totalBefore,
    total_after_filters: s.totalAfter,
    signal_types_available: s.typesAvailable,
    date_range: {
      earliest: s.earliest === undefined ? null : isoZ(s.earliest),
      latest: s.latest === undefined ? null : isoZ(s.latest),
    },
  };
}

export function summaryOf(records: SignalRecord[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of records) out[r.info.type] = (out[r.info.type] ?? 0) + 1;
  return out;
}

/** `{ name, domain, linkedin_url? }` of a company (linkedin_url only when known). */
export function companyHead(p: CompanyProfile): Pick<CompanyObject, 'name' | 'domain' | 'linkedin_url'> {
  const out: Pick<CompanyObject, 'name' | 'domain' | 'linkedin_url'> = { name: p.company.name, domain: p.domain };
  if (p.company.linkedin_url !== undefined) out.linkedin_url = p.company.linkedin_url;
  return out;
}

export function filterOf(body: {
  signal_types?: string[];
  signal_subtypes?: string[];
  detected_after?: number;
}): SignalFilter {
  const f: SignalFilter = {};
  const types = asSet(body.signal_types);
  const subtypes = asSet(body.signal_subtypes);
  if (types) f.types = types;
  if (subtypes) f.subtypes = subtypes;
  if (body.detected_after !== undefined) f.after = body.detected_after;
  return f;
}

/** What both searches take from their body: `limit` (25 by default), `signal_types` and `detected_after`. */
export function searchParamsOf(body: { limit?: number; signal_types?: string[]; detected_after?: number }): {
  limit: number;
  types?: Set<string>;
  after?: number;
} {
  const { types, after } = filterOf(body);
  return { limit: body.limit ?? 25, ...(types ? { types } : {}), ...(after !== undefined ? { after } : {}) };
}

/** The body must be a JSON object (also for endpoints whose fields are all optional). */
export function objectBody(body: unknown): Record<string, unknown> {
  if (body === undefined) return {};
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw validationError('body', 'must be a JSON object');
  }
  return body as Record<string, unknown>;
}
