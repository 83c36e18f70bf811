/**
 * How a capped search is narrowed (pure; the feed workflow runs it). A search answers at most 100 items, newest
 * first, with only a lower time bound, so a full answer may hide older matches. The only way to reach them is to ask
 * narrower questions whose answers fit, with the filters the spec allows, in this order:
 *   1. signal type: a request for several types (or all) becomes one request per type (complete: every match has a
 *      signal of some type);
 *   2. industries (company search) / seniority, then department (contact search): one request per listed value;
 *   3. employee-count range (company search, only when the feed has one): halved until a range holds one value.
 * Industries and employee ranges are split only when the feed itself filters on them: a company without an industry
 * or a head count matches no such filter, so splitting an unfiltered request by them would lose those companies.
 * A slice that none of these narrows is capped for good: the run names it as incomplete.
 */

import type { SearchFilters } from '../activities/feeds/types.ts';
import type { FeedKind } from '../contract/kinds.ts';

/** The most items one search call returns (spec 4.4 as the sandbox documents it: `limit` 1..100). */
export const SEARCH_CAP = 100;

/** The largest head count an open employee range is split up to (the sandbox's bound on the filter). */
export const MAX_EMPLOYEE_COUNT = 10_000_000;

export interface Narrowed {
  filters: SearchFilters;
  via: string;
}

/**
 * The narrower slices of a capped one, or undefined when no allowed filter narrows it. `types` are every signal type
 * there is (needed only when the slice has no single type).
 */
export function splitSlice(kind: FeedKind, filters: SearchFilters, types: readonly string[]): Narrowed[] | undefined {
  const byType = filters.signal_types?.length ? filters.signal_types : types;
  if (byType.length > 1) return each(filters, 'signal_types', byType);
  const lists: (keyof SearchFilters & ('industries' | 'seniority' | 'department'))[] =
    kind === 'company-search' ? ['industries'] : ['seniority', 'department'];
  for (const field of lists) {
    const values = filters[field];
    if (values && values.length > 1) return each(filters, field, values);
  }
  if (
    kind === 'company-search' &&
    (filters.employee_count_min !== undefined || filters.employee_count_max !== undefined)
  ) {
    const low = filters.employee_count_min ?? 0;
    const high = filters.employee_count_max ?? MAX_EMPLOYEE_COUNT;
    if (high > low) {
      const middle = Math.floor((low + high) / 2);
      return [
        {
          filters: { ...filters, employee_count_min: low, employee_count_max: middle },
          via: `employee_count=${low}-${middle}`,
        },
        {
          filters: { ...filters, employee_count_min: middle + 1, employee_count_max: high },
          via: `employee_count=${middle + 1}-${high}`,
        },
      ];
    }
  }
  return undefined;
}

function each(
  filters: SearchFilters,
  field: 'signal_types' | 'industries' | 'seniority' | 'department',
  values: readonly string[],
) {
  return values.map((value) => ({ filters: { ...filters, [field]: [value] }, via: `${field}=${value}` }));
}
