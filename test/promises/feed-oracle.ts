/**
 * What a scheduled feed should have asked and delivered, from the sandbox's truth alone: never the feed's own
 * identity function or slicing code, so that a bug there cannot hide behind the same bug in the check.
 * - `feedKey`: who an item is, as docs/contacts-and-feeds.md documents the `key` column, from the fields the service
 *   itself returns: `domain:<domain>`; a person by `email:…`, else `linkedin:…`, else `name:<full name>@<domain>`;
 *   for buyer intent prefixed by `<topic_id>|` (the same person showing intent on two topics is two deliveries).
 * - `expectedSlices`: the search requests a run must make, from its first (root) request: a request whose matches
 *   reach the cap of one answer is narrowed, in the order docs/contacts-and-feeds.md documents (signal type, then
 *   industries, or seniority then department, then the employee-count range halved), and each narrower request is
 *   asked once.
 */
import { SIGNAL_TYPES } from '../../sandbox/data/signal-types.ts';

type Item = Record<string, unknown>;
type Body = Record<string, unknown>;

const text = (value: unknown) => (typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined);

export function feedKey(kind: 'company-search' | 'contact-search' | 'intent-contacts', item: Item): string {
  if (kind === 'company-search') return `domain:${String(item['domain']).toLowerCase()}`;
  const contact = (item['contact'] ?? {}) as Item;
  const company = (item['company'] ?? {}) as Item;
  const email = text(contact['email'])?.toLowerCase();
  // A profile URL as written in the key: lower-cased, without scheme, `www.` or trailing slashes.
  const profile = text(contact['linkedin_url'])
    ?.toLowerCase()
    .split('://')
    .at(-1)
    ?.replace(/^www\./, '')
    .replace(/\/+$/, '');
  const fullName =
    text(contact['full_name']) ?? [contact['first_name'], contact['last_name']].filter(Boolean).join(' ');
  const person = email
    ? `email:${email}`
    : profile
      ? `linkedin:${profile}`
      : `name:${fullName.toLowerCase()}@${String(company['domain'] ?? '').toLowerCase()}`;
  return kind === 'intent-contacts' ? `${String(item['topic_id'])}|${person}` : person;
}

/** The most items one search answer holds (spec 4.4). */
const ANSWER_CAP = 100;
/** The largest head count an open employee range is split up to (the sandbox's bound on the filter). */
const MAX_EMPLOYEES = 10_000_000;

/** A body as a string that does not depend on key order. */
export function canonical(body: Body): string {
  const sorted = (value: unknown): unknown =>
    Array.isArray(value)
      ? value.map(sorted)
      : value && typeof value === 'object'
        ? Object.fromEntries(
            Object.entries(value as Body)
              .filter(([, v]) => v !== undefined)
              .sort(([a], [b]) => a.localeCompare(b))
              .map(([k, v]) => [k, sorted(v)]),
          )
        : value;
  return JSON.stringify(sorted(body));
}

function narrower(kind: 'company-search' | 'contact-search', body: Body): Body[] | undefined {
  const types = body['signal_types'] as string[] | undefined;
  const allTypes = SIGNAL_TYPES.filter((t) => kind === 'company-search' || t.association !== 'company').map(
    (t) => t.type,
  );
  const byType = types?.length ? types : allTypes;
  if (byType.length > 1) return byType.map((type) => ({ ...body, signal_types: [type] }));
  for (const field of kind === 'company-search' ? ['industries'] : ['seniority', 'department']) {
    const values = body[field] as string[] | undefined;
    if (values && values.length > 1) return values.map((value) => ({ ...body, [field]: [value] }));
  }
  if (
    kind === 'company-search' &&
    (body['employee_count_min'] !== undefined || body['employee_count_max'] !== undefined)
  ) {
    const low = (body['employee_count_min'] as number | undefined) ?? 0;
    const high = (body['employee_count_max'] as number | undefined) ?? MAX_EMPLOYEES;
    if (high > low) {
      const middle = Math.floor((low + high) / 2);
      return [
        { ...body, employee_count_min: low, employee_count_max: middle },
        { ...body, employee_count_min: middle + 1, employee_count_max: high },
      ];
    }
  }
  return undefined;
}

/** Every request a run starting at `root` must make, each once (canonical bodies), given the truth's full search. */
export function expectedSlices(
  kind: 'company-search' | 'contact-search',
  root: Body,
  truth: (body: Body) => unknown[],
): string[] {
  const asked: string[] = [];
  const visit = (body: Body) => {
    asked.push(canonical(body));
    if (truth(body).length < ANSWER_CAP) return;
    for (const child of narrower(kind, body) ?? []) visit(child);
  };
  visit(root);
  return asked;
}
