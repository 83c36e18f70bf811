/**
 * The sandbox as an oracle (README "The oracle"): what exists (signals in a window, each address's verification,
 * an export's rows and price) computed from the same data and rules the endpoints use, and a record of every call
 * it answered. Tests compare a job's output and cost with these, never with the kit's own reports.
 */
import { isValidDomain, normalizeDomain, resolveCompany } from './data/companies.ts';
import { type ContactObject, isValidEmail as isValidContactEmail, type Person } from './data/contacts.ts';
import { isValidEmail, normalizeEmail, type VerificationResult, verifyEmail } from './data/emails.ts';
import type { ExportService } from './exports.ts';
import { companySearchHits } from './routes/companies.ts';
import { contactSearchHits, contactSearchItem } from './routes/contacts.ts';
import { allIntentContacts, type ExportRequest, quoteExport } from './routes/intent.ts';
import type { DataStore, SignalFilter } from './store.ts';
import { isoZ, parseIsoDateTime } from './time.ts';

export { CALL_RECORD_CAPACITY, type CallFault, CallLog, type CallRecord, type CallSummary } from './call-log.ts';

export interface SignalWindow {
  signal_types?: string[];
  signal_subtypes?: string[];
  /** Only signals detected strictly after this time (ISO or epoch ms), as the API's `detected_after`. */
  detected_after?: string | number;
  /** Only signals detected strictly before this time (ISO or epoch ms). */
  detected_before?: string | number;
  /** Visibility horizon (epoch ms); default the sandbox clock now. */
  at?: number;
}

export interface TruthSignal {
  /** `sig_<hex>`, the enrich form. */
  signal_id: string;
  /** UTC, `Z` form. */
  detected_at: string;
  signal_type: string;
  signal_subtype: string;
}

export interface DomainTruth {
  /** The input as given. */
  input: string;
  /** Trimmed, lower-cased, `www.` and a trailing dot dropped: the form the sandbox compares. */
  domain: string;
  status: 'ok' | 'not_found' | 'invalid';
  /** Visible signals matching the window and filters, newest first (empty unless `ok`). */
  signals: TruthSignal[];
}

export interface EmailTruth {
  input: string;
  /** Trimmed, lower-cased: the form duplicates are collapsed on. */
  email: string;
  valid: boolean;
  /** The result a successful upstream check gives (undefined when not valid). */
  result: VerificationResult | undefined;
  /** What verifying it costs: 1, or 0 for `unknown` and invalid addresses. */
  credits: number;
}

export interface ExportTruth {
  rowCount: number;
  /** What the submit costs: the flat rate per distinct topic, 0 when the export has no rows. */
  credits: number;
}

/** An export submit's body, as the sandbox's route accepts it. */
export type { ExportRequest };

function ms(value: string | number | undefined, field: string): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'number') return value;
  const parsed = parseIsoDateTime(value);
  if (parsed === undefined) throw new Error(`truth: ${field} is not an ISO 8601 datetime: ${value}`);
  return parsed;
}

export interface TruthDeps {
  store: DataStore;
  exports: ExportService;
  clock: () => number;
}

/** Signals that exist for `domains` in a window, as enrich would show them with no `limit`. */
export function companySignals(deps: TruthDeps, domains: string[], window: SignalWindow = {}): DomainTruth[] {
  const at = window.at ?? deps.clock();
  const filter: SignalFilter = {};
  if (window.signal_types?.length) filter.types = new Set(window.signal_types);
  if (window.signal_subtypes?.length) filter.subtypes = new Set(window.signal_subtypes);
  const after = ms(window.detected_after, 'detected_after');
  if (after !== undefined) filter.after = after;
  const before = ms(window.detected_before, 'detected_before');
  return domains.map((input) => {
    const domain = normalizeDomain(input);
    if (!isValidDomain(domain)) return { input, domain, status: 'invalid', signals: [] };
    const profile = resolveCompany(deps.store.seed, domain);
    if (!profile) return { input, domain, status: 'not_found', signals: [] };
    const { records } = deps.store.signalsOf(profile, filter, Number.POSITIVE_INFINITY, at);
    const signals = records
      .filter((r) => before === undefined || r.t < before)
      .map((r) => ({
        signal_id: `sig_${r.hex}`,
        detected_at: isoZ(r.t),
        signal_type: r.info.type,
        signal_subtype: r.subtype,
      }));
    return { input, domain, status: 'ok', signals };
  });
}

/**
 * The domain of the company `POST /v1/companies/enrich` resolves a company name or LinkedIn company URL to (what
 * its answer then holds for `domain`), or null when it resolves none (a 404).
 */
export function companyDomainOf(
  deps: TruthDeps,
  identifier: { company_name: string } | { linkedin_url: string },
): string | null {
  const profile =
    'company_name' in identifier
      ? deps.store.companyByName(identifier.company_name)
      : deps.store.companyByLinkedin(identifier.linkedin_url);
  return profile ? profile.domain : null;
}

/** Each address's verification when the upstream check succeeds (upstream failures are per call, not truth). */
export function emailVerifications(deps: TruthDeps, emails: string[], at = deps.clock()): EmailTruth[] {
  return emails.map((input) => {
    const email = normalizeEmail(input);
    if (!isValidEmail(email)) return { input, email, valid: false, result: undefined, credits: 0 };
    const { result } = verifyEmail(deps.store.seed, email, at);
    return { input, email, valid: true, result, credits: result === 'unknown' ? 0 : 1 };
  });
}

/** The rows and price of an export submitted with `request` (topic ids must be in the catalog). */
export function intentExport(deps: TruthDeps, request: ExportRequest): ExportTruth {
  const { rowCount, credits } = quoteExport(deps.exports, request);
  return { rowCount, credits };
}

/**
 * Every company a `POST /v1/companies/search` body matches at the clock (or `at`), newest signal first, with no
 * `limit` (the endpoint returns at most 100 of them): the items the endpoint would give, all of them.
 */
export function companySearch(deps: TruthDeps, body: Record<string, unknown>, at = deps.clock()) {
  return companySearchHits(deps.store, body, at, true);
}

/** Every contact a `POST /v1/contacts/search` body matches at the clock (or `at`), with no `limit`. */
export function contactSearch(deps: TruthDeps, body: Record<string, unknown>, at = deps.clock()) {
  return contactSearchHits(deps.store, body, at, true).map(contactSearchItem);
}

/** Every item of every page `POST /v1/buyer-intent/contacts` gives for this body now (its credits: one each). */
export function intentContacts(deps: TruthDeps, body: Record<string, unknown>, at = deps.clock()) {
  return allIntentContacts(deps.store, body, at);
}

export interface ContactTruth {
  /** The input as given. */
  input: string;
  /** `email` for an address, `linkedin_url` for a profile URL (…/in/<slug>); as `POST /v1/contacts/enrich` takes it. */
  by: 'email' | 'linkedin_url';
  /** `invalid`: the endpoint refuses it (422); `not_found`: 404 (free). */
  status: 'ok' | 'not_found' | 'invalid';
  /** The employer's domain (ok only). */
  domain: string | null;
  /** The person as the service holds them (ok only): names, email, title, LinkedIn profile, place. */
  person: ContactObject | null;
  /** The employer as the service holds it (ok only); its LinkedIn URL may be a relative `/company/<name>`. */
  employer: { name: string; domain: string; linkedin_url?: string } | null;
  /** Visible person-level signals matching the window, newest first (as enrich with no `limit`). */
  signals: TruthSignal[];
}

/**
 * What `POST /v1/contacts/enrich` finds for each input (an email, or a LinkedIn profile URL), as the endpoint
 * resolves it now: the person-level signals in the window, newest first. A LinkedIn URL resolves to a person served
 * before when its slug was, otherwise to a synthesized person, as the endpoint does.
 */
export function contactSignals(deps: TruthDeps, inputs: string[], window: SignalWindow = {}): ContactTruth[] {
  const at = window.at ?? deps.clock();
  const filter: SignalFilter = {};
  if (window.signal_types?.length) filter.types = new Set(window.signal_types);
  const after = ms(window.detected_after, 'detected_after');
  if (after !== undefined) filter.after = after;
  return inputs.map((input): ContactTruth => {
    const byLinkedin = /linkedin\.com\/in\//i.test(input);
    const by = byLinkedin ? 'linkedin_url' : 'email';
    let person: Person | undefined;
    if (byLinkedin) {
      person = deps.store.personByLinkedin(input);
      if (!person) return { input, by, status: 'invalid', domain: null, person: null, employer: null, signals: [] };
    } else {
      const email = input.trim().toLowerCase();
      const none = { domain: null, person: null, employer: null, signals: [] };
      if (!isValidContactEmail(email)) return { input, by, status: 'invalid', ...none };
      const found = deps.store.personByEmail(email);
      if (typeof found === 'string') return { input, by, status: 'not_found', ...none };
      person = found;
    }
    const { records } = deps.store.signalsOf(person, filter, Number.POSITIVE_INFINITY, at);
    const signals = records.map((r) => ({
      signal_id: `sig_${r.hex}`,
      detected_at: isoZ(r.t),
      signal_type: r.info.type,
      signal_subtype: r.subtype,
    }));
    const employer = { name: person.employer.company.name, domain: person.employer.domain };
    const linkedin = person.employer.company.linkedin_url;
    return {
      input,
      by,
      status: 'ok',
      domain: person.employer.domain,
      person: { ...person.contact },
      employer: linkedin === undefined ? employer : { ...employer, linkedin_url: linkedin },
      signals,
    };
  });
}
