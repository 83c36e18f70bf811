/**
 * The catalog: a fixed, seeded list of companies that searches, buyer-intent contacts, statistics and emitted
 * webhook signals draw from (search cannot scan "every domain"). Built once per sandbox, bounded in size.
 */
import { Rng } from '../random.ts';
import { type CompanyProfile, resolveCompany, slugFromName } from './companies.ts';
import { NAME_PARTS_A, NAME_PARTS_B, TLDS } from './vocab.ts';

export const CATALOG_SIZE = 2000;

export interface Catalog {
  readonly seed: number;
  readonly domains: readonly string[];
  /** Company profile of catalog entry `i`. */
  company(i: number): CompanyProfile;
  /** Catalog domain for a LinkedIn company slug or a slugged company name, when the catalog has one. */
  domainForSlug(slug: string): string | undefined;
  /** Catalog domain (or contact key) for a signal-id prefix. */
  ownerForIdPrefix(prefix: string): string | undefined;
}

export function buildCatalog(seed: number, size = CATALOG_SIZE): Catalog {
  const rng = new Rng(seed ^ 0x0ca7a106);
  const domains: string[] = [];
  const profiles: CompanyProfile[] = [];
  const seen = new Set<string>();
  const bySlug = new Map<string, string>();
  const byPrefix = new Map<string, string>();
  // Bounded: the name space (50 x 40 x 40 x 13) is far larger than `size`, and we give up after a fixed budget.
  for (let attempt = 0; domains.length < size && attempt < size * 50; attempt++) {
    let label = rng.pick(NAME_PARTS_A) + rng.pick(NAME_PARTS_B);
    if (rng.chance(0.3)) label += rng.pick(NAME_PARTS_B);
    if (rng.chance(0.1)) label = `${rng.pick(NAME_PARTS_A)}-${label}`;
    const domain = `${label}.${rng.pick(TLDS)}`;
    if (seen.has(domain) || bySlug.has(label)) continue;
    seen.add(domain);
    const profile = resolveCompany(seed, domain);
    if (!profile) continue;
    domains.push(domain);
    profiles.push(profile);
    bySlug.set(label, domain);
    const nameSlug = slugFromName(profile.company.name);
    if (!bySlug.has(nameSlug)) bySlug.set(nameSlug, domain);
    byPrefix.set(profile.idPrefix, domain);
  }
  return {
    seed,
    domains,
    company: (i) => profiles[i]!,
    domainForSlug: (slug) => bySlug.get(slug),
    ownerForIdPrefix: (prefix) => byPrefix.get(prefix),
  };
}
