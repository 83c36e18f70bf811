/** Contact endpoints: enrich (spec 4.3) and search (spec 4.5). */
import { z } from 'zod';
import type { ApiRequest, Route } from '../api.ts';
import { isValidEmail, type Person } from '../data/contacts.ts';
import { type ContactHit, searchContacts } from '../data/search.ts';
import { hexToUuid, signalHex, toEnrichSignal } from '../data/signals.ts';
import { SENIORITIES } from '../data/vocab.ts';
import { notFound, validationError } from '../errors.ts';
import type { DataStore } from '../store.ts';
import { isoOffset } from '../time.ts';
import { boundedInt, dateTime, enrichLimit, lowerSet, parse, signalTypes } from '../validation.ts';
import { companyHead, coverageOf, filterOf, searchParamsOf, summaryOf } from './common.ts';
import { DEFAULT_ENRICH_LIMIT } from './companies.ts';

const enrichSchema = z.strictObject({
  contact_email: z.string().optional(),
  contact_linkedin_url: z.string().optional(),
  signal_types: signalTypes.optional(),
  detected_after: dateTime.optional(),
  limit: enrichLimit.optional(),
});

const SENIORITY_LOWER = new Set(SENIORITIES.map((s) => s.toLowerCase()));

export const seniorityList = z
  .array(
    z.string().refine((s) => SENIORITY_LOWER.has(s.toLowerCase()), {
      error: `must be one of ${SENIORITIES.join(', ')}`,
    }),
  )
  .max(10, { error: 'at most 10 entries' });

export const departmentList = z.array(z.string()).max(20, { error: 'at most 20 entries' });

const searchSchema = z.strictObject({
  signal_types: signalTypes.optional(),
  detected_after: dateTime.optional(),
  seniority: seniorityList.optional(),
  department: departmentList.optional(),
  job_title: z.string().max(200).optional(),
  limit: boundedInt(1, 100).optional(),
});

function enrich(req: ApiRequest, store: DataStore) {
  const body = parse(enrichSchema, req.body);
  let person: Person | undefined;
  if (body.contact_email !== undefined) {
    const email = body.contact_email.trim().toLowerCase();
    if (!isValidEmail(email)) throw validationError('contact_email', 'not a valid email address');
    const found = store.personByEmail(email);
    if (typeof found === 'string') throw notFound(`no contact found for ${email} (${found})`);
    person = found;
  } else if (body.contact_linkedin_url !== undefined) {
    person = store.personByLinkedin(body.contact_linkedin_url);
    if (!person) throw validationError('contact_linkedin_url', 'not a LinkedIn profile URL (.../in/<slug>)');
  } else {
    throw validationError('contact_email', 'one of contact_email, contact_linkedin_url is required');
  }
  const result = store.signalsOf(person, filterOf(body), body.limit ?? DEFAULT_ENRICH_LIMIT, req.now);
  store.remember(person);
  req.charge(2 * result.records.length);
  return {
    body: {
      contact: person.contact,
      company: companyHead(person.employer),
      contact_signals: result.records.map(toEnrichSignal),
      signal_summary: summaryOf(result.records),
      total: result.totalAfter,
      coverage: coverageOf(result),
    },
  };
}

/** The hits of a contact search body (422 for a bad one), the `limit` newest; the oracle asks for all of them. */
export function contactSearchHits(store: DataStore, rawBody: unknown, now: number, all = false) {
  const body = parse(searchSchema, rawBody);
  const params: Parameters<typeof searchContacts>[1] = searchParamsOf(body);
  if (all) params.limit = Number.POSITIVE_INFINITY;
  const seniority = lowerSet(body.seniority);
  if (seniority) params.seniority = seniority;
  const department = lowerSet(body.department);
  if (department) params.department = department;
  if (body.job_title?.trim()) params.jobTitle = body.job_title.trim();
  return searchContacts(store, params, now);
}

function search(req: ApiRequest, store: DataStore) {
  const hits = contactSearchHits(store, req.body, req.now);
  for (const h of hits) store.remember(h.person);
  req.charge(hits.length);
  req.note({ body: req.body }, { count: hits.length });
  return {
    body: {
      contacts: hits.map((h) => contactSearchItem(h)),
      count: hits.length,
    },
  };
}

/** One contact search item: the person, their employer, and their newest matching signal. */
export function contactSearchItem(h: ContactHit) {
  return {
    contact: h.person.contact,
    company: companyHead(h.person.employer),
    signal_count: h.count,
    latest_signal_at: isoOffset(h.latest),
    latest_signal_id: hexToUuid(signalHex(h.person, h.latestIndex)),
  };
}

export const contactRoutes: Route[] = [
  { method: 'POST', path: '/v1/contacts/enrich', handler: (req, ctx) => enrich(req, ctx.store) },
  { method: 'POST', path: '/v1/contacts/search', handler: (req, ctx) => search(req, ctx.store) },
];
