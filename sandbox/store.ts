/**
 * The data side of one sandbox: seed and clock, the catalog, the bounded registries that let ids and LinkedIn
 * URLs served earlier be looked up again, the signals created by `emitSignals`, and the per-owner signal query
 * every enrich endpoint uses.
 */
import { BoundedMap } from './bounded.ts';
import { buildCatalog, type Catalog } from './data/catalog.ts';
import {
  type CompanyProfile,
  isValidDomain,
  normalizeDomain,
  resolveCompany,
  slugFromLinkedinUrl,
  slugFromName,
} from './data/companies.ts';
import {
  type ContactMiss,
  type Person,
  personFromEmail,
  personFromLinkedinSlug,
  resolveContactByEmail,
  slugFromPersonUrl,
} from './data/contacts.ts';
import type { IntentSurfacing } from './data/intent.ts';
import { SIGNAL_TYPES, TYPE_INDEX } from './data/signal-types.ts';
import {
  buildEmittedSignal,
  buildSignal,
  decodeSignalHex,
  isPerson,
  parseSignalId,
  type SignalOwner,
  type SignalRecord,
  scanTimeline,
} from './data/signals.ts';
import { hash2, hashString, pickCumulative, unit } from './random.ts';

export interface SignalFilter {
  types?: Set<string>;
  subtypes?: Set<string>;
  /** Only signals detected strictly after this time (epoch ms). */
  after?: number;
}

export interface OwnerSignals {
  /** Newest first, at most `limit`. */
  records: SignalRecord[];
  totalBefore: number;
  totalAfter: number;
  typesAvailable: string[];
  earliest: number | undefined;
  latest: number | undefined;
}

export const REGISTRY_CAPACITY = 100_000;
export const EMITTED_CAPACITY = 10_000;

export class DataStore {
  readonly seed: number;
  readonly clock: () => number;
  /** Opt-in time at which some buyer-intent contacts appear (see IntentSurfacing). */
  intentSurfacing: IntentSurfacing | undefined;
  /** Signal-id prefix → owner key, for owners whose signals were served. */
  readonly registry = new BoundedMap<string, string>(REGISTRY_CAPACITY);
  /** LinkedIn person slug → email, for people served. */
  readonly personSlugs = new BoundedMap<string, string>(REGISTRY_CAPACITY);
  /** Emitted signals by id hex, oldest first; at most EMITTED_CAPACITY in all (also in emittedByDomain). */
  readonly emittedById = new Map<string, SignalRecord>();
  readonly emittedByDomain = new Map<string, SignalRecord[]>();
  private emitCounter = 0;
  private catalogCache: Catalog | undefined;

  constructor(seed: number, clock: () => number) {
    this.seed = seed;
    this.clock = clock;
    this.intentSurfacing = undefined;
  }

  get catalog(): Catalog {
    this.catalogCache ??= buildCatalog(this.seed);
    return this.catalogCache;
  }

  /** A company by (raw) domain: undefined when the domain is not valid, null when nothing resolves. */
  companyByDomain(raw: string): CompanyProfile | null | undefined {
    const domain = normalizeDomain(raw);
    if (!isValidDomain(domain)) return undefined;
    return resolveCompany(this.seed, domain);
  }

  companyByName(name: string): CompanyProfile | null {
    const slug = slugFromName(name);
    if (!slug) return null;
    const domain = this.catalog.domainForSlug(slug) ?? `${slug}.com`;
    return isValidDomain(domain) ? resolveCompany(this.seed, domain) : null;
  }

  /** undefined when the URL is not a LinkedIn company URL. */
  companyByLinkedin(url: string): CompanyProfile | null | undefined {
    const slug = slugFromLinkedinUrl(url);
    if (!slug) return undefined;
    const domain = this.catalog.domainForSlug(slug) ?? `${slug}.com`;
    return isValidDomain(domain) ? resolveCompany(this.seed, domain) : null;
  }

  personByEmail(email: string): Person | ContactMiss {
    return resolveContactByEmail(this.seed, email);
  }

  /** undefined when the URL is not a LinkedIn person URL. */
  personByLinkedin(url: string): Person | undefined {
    const slug = slugFromPersonUrl(url);
    if (!slug) return undefined;
    const email = this.personSlugs.get(slug);
    if (email) {
      const p = this.personByEmail(email);
      if (typeof p !== 'string') return p;
    }
    return personFromLinkedinSlug(this.seed, slug, this.catalog);
  }

  /** Records an owner whose signals (or a person whose LinkedIn URL) a response carried. */
  remember(owner: SignalOwner): void {
    if (!this.catalog.ownerForIdPrefix(owner.idPrefix)) this.registry.set(owner.idPrefix, owner.key);
    if (isPerson(owner)) {
      const slug = slugFromPersonUrl(owner.contact.linkedin_url);
      if (slug) this.personSlugs.set(slug, owner.email);
    }
  }

  /** The visible signals of an owner that match `filter`, newest first, the first `limit` of them built. */
  signalsOf(owner: SignalOwner, filter: SignalFilter, limit: number, now: number): OwnerSignals {
    const tl = scanTimeline(owner, now);
    const emitted = isPerson(owner) ? undefined : this.emittedByDomain.get(owner.key);
    const extra = emitted ? emitted.filter((r) => r.t <= now) : [];
    const n = tl.times.length;
    const seenTypes = new Set<number>();
    for (const ty of tl.types) seenTypes.add(ty);
    for (const r of extra) seenTypes.add(TYPE_INDEX.get(r.info.type)!);
    let earliest = n > 0 ? tl.times[0] : undefined;
    let latest = n > 0 ? tl.times[n - 1] : undefined;
    for (const r of extra) {
      if (earliest === undefined || r.t < earliest) earliest = r.t;
      if (latest === undefined || r.t > latest) latest = r.t;
    }
    const records: SignalRecord[] = [];
    let totalAfter = 0;
    let i = n - 1;
    let e = extra.length - 1;
    const { types, subtypes, after } = filter;
    while (i >= 0 || e >= 0) {
      const useExtra = e >= 0 && (i < 0 || extra[e]!.t >= tl.times[i]!);
      const t = useExtra ? extra[e]!.t : tl.times[i]!;
      if (after !== undefined && t <= after) break; // everything older fails too
      const info = useExtra ? extra[e]!.info : SIGNAL_TYPES[tl.types[i]!]!;
      const subtype = useExtra ? extra[e]!.subtype : info.subtypes[tl.subs[i]!]!;
      if ((!types || types.has(info.type)) && (!subtypes || subtypes.has(subtype))) {
        totalAfter++;
        if (records.length < limit) {
          records.push(useExtra ? extra[e]! : buildSignal(this.seed, owner, i, t, tl.types[i]!, tl.subs[i]!));
        }
      }
      if (useExtra) e--;
      else i--;
    }
    const typesAvailable = SIGNAL_TYPES.filter((_, k) => seenTypes.has(k)).map((s) => s.type);
    return { records, totalBefore: n + extra.length, totalAfter, typesAvailable, earliest, latest };
  }

  private ownerFromKey(key: string): SignalOwner | null {
    if (key.startsWith('contact:')) {
      const email = key.slice(8);
      const employer = resolveCompany(this.seed, email.slice(email.indexOf('@') + 1));
      return employer ? personFromEmail(this.seed, email, employer) : null;
    }
    return resolveCompany(this.seed, key);
  }

  /** `GET /v1/signals/{id}`: a visible signal by `sig_<hex>` or UUID id, when this sandbox knows its owner. */
  lookup(id: string, now: number): SignalRecord | undefined {
    const hex = parseSignalId(id);
    if (!hex) return undefined;
    const emitted = this.emittedById.get(hex);
    if (emitted) return emitted.t <= now ? emitted : undefined;
    const { prefix, index } = decodeSignalHex(hex);
    const key = this.catalog.ownerForIdPrefix(prefix) ?? this.registry.get(prefix);
    if (!key) return undefined;
    const owner = this.ownerFromKey(key);
    if (!owner) return undefined;
    const tl = scanTimeline(owner, now);
    if (index >= tl.times.length) return undefined;
    const rec = buildSignal(this.seed, owner, index, tl.times[index]!, tl.types[index]!, tl.subs[index]!);
    return rec.hex === hex ? rec : undefined;
  }

  private keepEmitted(rec: SignalRecord): void {
    if (this.emittedById.size >= EMITTED_CAPACITY) {
      const oldest = this.emittedById.values().next();
      if (!oldest.done) {
        const old = oldest.value;
        this.emittedById.delete(old.hex);
        const list = this.emittedByDomain.get(old.company.domain);
        const at = list ? list.indexOf(old) : -1;
        if (list && at >= 0) list.splice(at, 1);
        if (list && list.length === 0) this.emittedByDomain.delete(old.company.domain);
      }
    }
    this.emittedById.set(rec.hex, rec);
    const list = this.emittedByDomain.get(rec.company.domain) ?? [];
    list.push(rec);
    list.sort((a, b) => a.t - b.t);
    this.emittedByDomain.set(rec.company.domain, list);
  }

  /** Creates `count` new signals detected now (for webhooks); they also show in enrich and lookups. */
  emit(opts: { count: number; signalTypes?: string[]; domain?: string }, now: number): SignalRecord[] {
    const typeIndexes = (opts.signalTypes ?? []).map((t) => {
      const k = TYPE_INDEX.get(t);
      if (k === undefined) throw new Error(`emitSignals: unknown signal type ${t}`);
      return k;
    });
    let fixed: CompanyProfile | undefined;
    if (opts.domain !== undefined) {
      const p = this.companyByDomain(opts.domain);
      if (!p) throw new Error(`emitSignals: ${opts.domain} does not resolve to a company`);
      fixed = p;
    }
    const out: SignalRecord[] = [];
    const count = Math.max(0, Math.min(10_000, Math.floor(opts.count)));
    for (let c = 0; c < count; c++) {
      const n = ++this.emitCounter;
      const h = hash2(hashString('emit-pick', this.seed), n);
      const profile = fixed ?? this.catalog.company(h % this.catalog.domains.length);
      const typeIndex =
        typeIndexes.length > 0
          ? typeIndexes[h % typeIndexes.length]!
          : pickCumulative(profile.typeCumulative, unit(hash2(h, 7)));
      const rec = buildEmittedSignal(this.seed, n, profile, typeIndex, now);
      this.keepEmitted(rec);
      out.push(rec);
    }
    return out;
  }
}
