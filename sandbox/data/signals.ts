/**
 * Signals. Every owner (a company or a person) has a fixed timeline: events laid out from TIMELINE_START_MS with
 * seeded exponential gaps, each with a type and subtype. An event is visible once its time is at or before the
 * clock, so the visible events are always a prefix of the timeline and an event's index never changes.
 *
 * Scanning a timeline draws three numbers per event (cheap); the full signal (names, texts, `data`) is built only
 * for the events a response returns, from a generator seeded by (owner, index): random access, no caching.
 */
import { hash2, hashString, hex8, pickCumulative, Rng } from '../random.ts';
import { isoDate, isoOffset, isoZ, MINUTE, TIMELINE_END_MS, TIMELINE_START_MS } from '../time.ts';
import type { CompanyObject, CompanyProfile, TimelineOwner } from './companies.ts';
import { type Person, personFromEmail, staffEmail } from './contacts.ts';
import { type Association, SIGNAL_TYPES, type SignalTypeInfo, SUBTYPE_CUMULATIVE } from './signal-types.ts';
import {
  AGENCIES,
  COMPETITORS,
  INITIATIVES,
  INVESTORS,
  KEYWORDS,
  NAME_PARTS_A,
  NAME_PARTS_B,
  PAGES,
  PAIN_POINTS,
  PUBLISHERS,
  TECHNOLOGIES,
} from './vocab.ts';

/** At most this many events per timeline (the index has 12 bits in the id). */
export const MAX_EVENTS = 4095;

export type SignalOwner = CompanyProfile | Person;

export function isPerson(owner: SignalOwner): owner is Person {
  return 'employer' in owner;
}

/** The visible prefix of a timeline, oldest first: event i has time times[i], type types[i], subtype subs[i]. */
export interface Timeline {
  times: number[];
  types: number[];
  subs: number[];
}

export function scanTimeline(owner: TimelineOwner, until: number): Timeline {
  const out: Timeline = { times: [], types: [], subs: [] };
  if (owner.rate <= 0) return out;
  const rng = new Rng(hash2(owner.h1, 0x71e11e));
  const end = Math.min(until, TIMELINE_END_MS);
  const meanGapS = 1 / owner.rate / 1000;
  let t = TIMELINE_START_MS;
  for (let i = 0; i < MAX_EVENTS; i++) {
    const gapS = Math.round(-Math.log(1 - rng.next()) * meanGapS);
    t += Math.max(MINUTE, gapS * 1000);
    const u1 = rng.next();
    const u2 = rng.next();
    if (t > end) break;
    const type = pickCumulative(owner.typeCumulative, u1);
    out.times.push(t);
    out.types.push(type);
    out.subs.push(pickCumulative(SUBTYPE_CUMULATIVE[type]!, u2));
  }
  return out;
}

/** A signal as the sandbox holds it; formatted per response by toEnrichSignal / toLookupSignal. */
export interface SignalRecord {
  /** 32 hex digits: `sig_<hex>` in enrich, the same digits as a UUID in lookups and webhooks. */
  hex: string;
  t: number;
  info: SignalTypeInfo;
  subtype: string;
  name: string;
  association: Association;
  company: CompanyObject;
  contact?: { full_name: string; job_title: string; linkedin_url: string };
  data: Record<string, unknown>;
}

const VARIANT = ['8', '9', 'a', 'b'];

/** Signal id digits: owner prefix (12), version `4`, index (3), variant, check (15). Valid as a v4 UUID. */
export function signalHex(owner: TimelineOwner, index: number): string {
  const c1 = hash2(owner.h2, index ^ 0xab5e);
  const c2 = hash2(c1, owner.h1);
  return `${owner.idPrefix}4${index.toString(16).padStart(3, '0')}${VARIANT[c1 & 3]}${hex8(c1).slice(1)}${hex8(c2)}`;
}

export function hexToUuid(hex: string): string {
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** Accepts `sig_<32 hex>`, a UUID or bare hex; returns the 32 lower-case hex digits, or undefined. */
export function parseSignalId(id: string): string | undefined {
  let s = id.trim().toLowerCase();
  if (s.startsWith('sig_')) s = s.slice(4);
  s = s.replaceAll('-', '');
  return /^[0-9a-f]{32}$/.test(s) ? s : undefined;
}

/** The owner prefix and event index encoded in an id made by signalHex. */
export function decodeSignalHex(hex: string): { prefix: string; index: number } {
  return { prefix: hex.slice(0, 12), index: Number.parseInt(hex.slice(13, 16), 16) };
}

export interface EnrichSignal {
  signal_id: string;
  signal_type: string;
  signal_subtype: string;
  signal_name: string;
  detected_at: string;
  association: Association;
  company: CompanyObject;
  contact?: SignalRecord['contact'];
  data: Record<string, unknown>;
}

/** Enrich form: `sig_<hex>` ids and `Z` timestamps. */
export function toEnrichSignal(r: SignalRecord): EnrichSignal {
  const out: EnrichSignal = {
    signal_id: `sig_${r.hex}`,
    signal_type: r.info.type,
    signal_subtype: r.subtype,
    signal_name: r.name,
    detected_at: isoZ(r.t),
    association: r.association,
    company: r.company,
    data: r.data,
  };
  if (r.contact) out.contact = r.contact;
  return out;
}

/** Lookup/search form: UUID ids and `+00:00` timestamps with milliseconds. */
export function toLookupSignal(r: SignalRecord): EnrichSignal {
  const out = toEnrichSignal(r);
  out.signal_id = hexToUuid(r.hex);
  out.detected_at = isoOffset(r.t);
  return out;
}

/** Builds event `index` (time t, type and subtype indexes from the scan) of an owner's timeline. */
export function buildSignal(
  seed: number,
  owner: SignalOwner,
  index: number,
  t: number,
  typeIndex: number,
  subIndex: number,
): SignalRecord {
  const info = SIGNAL_TYPES[typeIndex]!;
  const subtype = info.subtypes[subIndex]!;
  const rng = new Rng(hash2(owner.h2, index + 0x51c0));
  const profile = isPerson(owner) ? owner.employer : owner;
  let person: Person | undefined;
  if (info.association === 'contact') {
    person = isPerson(owner) ? owner : personFromEmail(seed, staffEmail(seed, profile.domain, rng.int(0, 40)), profile);
  }
  const built = buildData(rng, info, subtype, profile, person, t);
  const record: SignalRecord = {
    hex: signalHex(owner, index),
    t,
    info,
    subtype,
    name: rng.chance(0.5) ? '' : built.title,
    association: info.association,
    company: profile.company,
    data: built.data,
  };
  if (person) {
    record.contact = {
      full_name: person.contact.full_name,
      job_title: person.contact.job_title,
      linkedin_url: person.contact.linkedin_url,
    };
  }
  return record;
}

/** A signal created now by `emitSignals` (id from its own counter, not from a timeline). */
export function buildEmittedSignal(
  seed: number,
  counter: number,
  profile: CompanyProfile,
  typeIndex: number,
  t: number,
): SignalRecord {
  const rng = new Rng(hash2(hashString('emit', seed), counter));
  const _info = SIGNAL_TYPES[typeIndex]!;
  const subIndex = pickCumulative(SUBTYPE_CUMULATIVE[typeIndex]!, rng.next());
  const owner = { ...profile, h2: hash2(profile.h2, counter ^ 0xe417) };
  const record = buildSignal(seed, owner, 0, t, typeIndex, subIndex);
  const r = rng.hex(4);
  record.hex = `${r.slice(0, 12)}4${r.slice(13, 16)}${VARIANT[rng.u32() & 3]}${r.slice(17)}`;
  return record;
}

interface Built {
  title: string;
  data: Record<string, unknown>;
}

function year(t: number): number {
  return new Date(t).getUTCFullYear();
}

function round(n: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

function fakeCompanyName(rng: Rng): { name: string; domain: string } {
  const label = rng.pick(NAME_PARTS_A) + rng.pick(NAME_PARTS_B);
  return { name: label[0]!.toUpperCase() + label.slice(1), domain: `${label}.com` };
}

function secUrl(rng: Rng, profile: CompanyProfile, form: string): string {
  const cik = 1_000_000 + (profile.h1 % 900_000);
  return `https://www.sec.gov/Archives/edgar/data/${cik}/${form.toLowerCase()}-${rng.hex(1)}.htm`;
}

function postData(rng: Rng, info: SignalTypeInfo, profile: CompanyProfile, person: Person | undefined): Built {
  const name = profile.company.name;
  const technologies = rng.sample(TECHNOLOGIES, rng.int(0, 2));
  const competitors = rng.chance(0.3) ? rng.sample(COMPETITORS, 1) : [];
  const pain_points = rng.chance(0.4) ? rng.sample(PAIN_POINTS, rng.int(1, 2)) : [];
  const initiatives = rng.chance(0.4) ? rng.sample(INITIATIVES, 1) : [];
  const keywords = rng.sample(KEYWORDS, rng.int(1, 3));
  const topic = initiatives[0] ?? keywords[0]!;
  const parts = [`Excited to share our progress on ${topic}.`];
  if (technologies.length) parts.push(`We rebuilt our stack on ${technologies.join(' and ')}.`);
  if (pain_points.length) parts.push(`It cut down on ${pain_points.join(' and ')}.`);
  if (competitors.length) parts.push(`Moved away from ${competitors[0]} this quarter.`);
  const text = parts.join(' ');
  const author = person ? person.contact.full_name : info.source === 'reddit' ? `u/${rng.hex(1).slice(0, 6)}` : name;
  const host =
    info.source === 'reddit'
      ? 'https://www.reddit.com/r/sales/comments/'
      : info.source === 'twitter'
        ? 'https://x.com/i/status/'
        : 'https://www.linkedin.com/feed/update/urn:li:activity:';
  const summary = person
    ? `${author} (${person.contact.job_title} at ${name}) posted about ${topic}`
    : `${name} ${info.source === 'reddit' ? 'was discussed on Reddit' : 'posted'} about ${topic}`;
  return {
    title: `Post about ${topic}`,
    data: {
      summary,
      text,
      author,
      url: `${host}${rng.int(1_000_000, 9_999_999)}${rng.int(100_000, 999_999)}`,
      engagement: { likes: rng.int(0, 2000), comments: rng.int(0, 200), shares: rng.int(0, 150) },
      keywords,
      technologies,
      competitors,
      pain_points,
      initiatives,
    },
  };
}

function secExtras(rng: Rng, data: Record<string, unknown>, t: number, profile: CompanyProfile, form: string): void {
  const maybe = (p: number): boolean => rng.chance(p);
  if (maybe(0.7)) data['source_url'] = secUrl(rng, profile, form);
  if (maybe(0.7)) data['filing_date'] = isoDate(t);
  if (maybe(0.6)) data['filing_year'] = year(t);
  if (maybe(0.6)) data['fiscal_year'] = year(t) - (new Date(t).getUTCMonth() < 3 ? 1 : 0);
}

/** What the builder of one kind of signal data draws from: the company, the person if any, and the time. */
interface DataDraw {
  rng: Rng;
  info: SignalTypeInfo;
  subtype: string;
  profile: CompanyProfile;
  person: Person | undefined;
  t: number;
  name: string;
  domain: string;
}

/** A news article: a deal (acquires, merges_with) or another piece of company news. */
function newsData(d: DataDraw): Built {
  const { rng, subtype, name } = d;
  const publisher = rng.pick(PUBLISHERS);
  const url = `https://news.example.org/${publisher.toLowerCase().replaceAll(' ', '-')}/${rng.hex(2)}`;
  if (subtype === 'acquires' || subtype === 'merges_with') {
    const target = fakeCompanyName(rng);
    const verb = subtype === 'acquires' ? 'acquires' : 'merges with';
    const title = `${name} ${verb} ${target.name}`;
    return {
      title,
      data: {
        summary: `${title} in a deal reported by ${publisher}`,
        headline: title,
        publisher,
        source_url: url,
        target_company: target,
        deal_value_millions: rng.chance(0.5) ? rng.int(5, 900) : null,
      },
    };
  }
  const what = rng.pick([
    `opens a new office in ${rng.pick(['London', 'Austin', 'Singapore', 'Berlin', 'Toronto'])}`,
    `announces a partnership with ${fakeCompanyName(rng).name}`,
    `launches its ${rng.pick(['AI assistant', 'analytics suite', 'mobile app', 'enterprise plan'])}`,
    `reports ${rng.int(20, 180)}% year-over-year growth`,
    `names a new ${rng.pick(['CEO', 'CFO', 'CTO', 'Chief Revenue Officer'])}`,
    `wins an industry award for ${rng.pick(INITIATIVES)}`,
  ]);
  const title = `${name} ${what}`;
  return {
    title,
    data: {
      summary: title,
      headline: title,
      publisher,
      source_url: url,
      sentiment: rng.pick(['positive', 'positive', 'neutral', 'negative']),
    },
  };
}

/** The job titles a company hires most. */
function hiringTrendsData(d: DataDraw): Built {
  const { rng, name } = d;
  // biome-ignore format: list
  const titles = rng.sample(
    ['Account Executive', 'Software Engineer', 'Data Scientist', 'Product Manager', 'SDR', 'DevOps Engineer',
      'Customer Success Manager', 'Security Engineer', 'Recruiter', 'Financial Analyst'],
    3,
  );
  const openRoles = rng.int(5, 400);
  return {
    title: `${name} is hiring ${titles[0]}s`,
    data: {
      summary: `${name} has ${openRoles} open roles, led by ${titles.join(', ')}`,
      trending_titles: titles,
      open_roles: openRoles,
    },
  };
}

/** The change of a company's open roles over 30 days. */
function hiringVelocityData(d: DataDraw): Built {
  const { rng, name } = d;
  const change = rng.int(-60, 250);
  const openRoles = rng.int(3, 500);
  return {
    title: `Hiring ${change >= 0 ? 'up' : 'down'} ${Math.abs(change)}% at ${name}`,
    data: {
      summary: `${name} open roles changed ${change >= 0 ? '+' : ''}${change}% in 30 days (${openRoles} open)`,
      open_roles: openRoles,
      change_pct: change,
      period_days: 30,
    },
  };
}

/** A person's promotion or new job. */
function workMilestoneData(d: DataDraw): Built {
  const { rng, subtype, person, t, name } = d;
  const p = person!;
  const prev = fakeCompanyName(rng).name;
  const summary =
    subtype === 'promotion'
      ? `${p.contact.full_name} was promoted to ${p.contact.job_title} at ${name}`
      : `${p.contact.full_name} joined ${name} as ${p.contact.job_title}`;
  return {
    title: summary,
    data: {
      summary,
      full_name: p.contact.full_name,
      new_title: p.contact.job_title,
      previous_company: subtype === 'promotion' ? name : prev,
      previous_title: rng.pick(['Manager', 'Senior Manager', 'Director', 'Lead', 'Head of Growth']),
      seniority: p.contact.seniority,
      start_date: isoDate(t),
    },
  };
}

/** A 10-K annual report. */
function annualReportData(d: DataDraw): Built {
  const { rng, profile, t, name } = d;
  const fy = year(t) - 1;
  // biome-ignore format: list
  const highlights = rng.sample(
    [`Revenue grew ${rng.int(2, 40)}% year over year`, `Operating margin of ${rng.int(-10, 35)}%`,
      `${rng.int(1, 9)} acquisitions closed during the year`, `Headcount reached ${profile.employeesLow}`,
      `Cloud revenue now ${rng.int(20, 90)}% of total`, `Share repurchase of $${rng.int(50, 900)}M authorized`],
    3,
  );
  const data: Record<string, unknown> = {
    summary: `${name} filed its fiscal ${fy} annual report`,
    highlights,
  };
  secExtras(rng, data, t, profile, '10-K');
  return { title: `${name} 10-K for fiscal ${fy}`, data };
}

/** A 10-Q quarterly or 8-K current report, with the optional fields real filings leave out. */
function quarterlyOrCurrentReportData(d: DataDraw): Built {
  const { rng, info, subtype, profile, t, name } = d;
  const form = info.type === 'sec-10q' ? '10-Q' : '8-K';
  const texts: Record<string, [string, string]> = {
    cashFlowConcern: ['flags cash flow pressure', 'financial'],
    revenueGrowth: ['reports accelerating revenue', 'financial'],
    marginPressure: ['warns of margin pressure', 'financial'],
    cfoChange: ['announces a CFO transition', 'leadership'],
    earningsRelease: ['releases quarterly earnings', 'financial'],
    acquisitionAnnounced: ['announces an acquisition', 'corporate_development'],
    acquisitionCompleted: ['completes an acquisition', 'corporate_development'],
  };
  const [verb, category] = texts[subtype] ?? ['files a report', 'financial'];
  const summary = `${name} ${verb} in its ${form}`;
  const data: Record<string, unknown> = { summary };
  if (rng.chance(0.8)) data['detail'] = `${name} disclosed that ${verb.replace(/^\w+s /, '')} may affect spending.`;
  if (rng.chance(0.7)) {
    const metrics: Record<string, unknown> = { timeframe: rng.pick(['next_quarter', 'current_quarter']) };
    if (rng.chance(0.6)) {
      metrics['dollar_context'] = rng.pick(['operating cash flow', 'revenue', 'deal value', 'capital expenditure']);
      metrics['dollar_millions'] = round(rng.float(1, 2500), 1);
    }
    data['metrics'] = metrics;
  }
  if (rng.chance(0.8)) data['relevance'] = round(rng.next(), 2);
  if (rng.chance(0.7)) data['sentiment'] = subtype === 'revenueGrowth' ? 'positive' : rng.pick(['negative', 'neutral']);
  if (rng.chance(0.7)) data['confidence'] = rng.pick(['high', 'medium', 'low']);
  secExtras(rng, data, t, profile, form);
  if (rng.chance(0.6))
    data['sales_relevance'] = rng.pick(['budget change likely', 'new decision maker', 'vendor review likely']);
  if (rng.chance(0.8)) data['signal_category'] = category;
  if (rng.chance(0.4)) data['vendors_mentioned'] = rng.sample(TECHNOLOGIES, rng.int(1, 3));
  return { title: summary, data };
}

/** A foreign issuer's 6-K or 20-F report. */
function foreignIssuerReportData(d: DataDraw): Built {
  const { rng, info, profile, t, name } = d;
  const form = info.type === 'sec-6k' ? '6-K' : '20-F';
  const data: Record<string, unknown> = {
    summary: `${name} furnished a ${form} report`,
    highlights: [
      `Revenue ${rng.pick(['up', 'down'])} ${rng.int(1, 30)}%`,
      `Guidance ${rng.pick(['raised', 'kept', 'cut'])}`,
    ],
  };
  secExtras(rng, data, t, profile, form);
  return { title: `${name} ${form}`, data };
}

/** A funding round with its investors. */
function fundingRoundData(d: DataDraw): Built {
  const { rng, subtype, name } = d;
  const rounds: Record<string, string> = {
    seedRound: 'Seed',
    seriesA: 'Series A',
    seriesB: 'Series B',
    seriesC: 'Series C',
    growthRound: 'Growth',
    debtFinancing: 'Debt',
  };
  const round_ = rounds[subtype] ?? 'Round';
  const amount = round(rng.float(1, subtype === 'seedRound' ? 6 : 250), 1);
  const investors = rng.sample(INVESTORS, rng.int(1, 3));
  const title = `${name} raises $${amount}M ${round_}`;
  return {
    title,
    data: {
      summary: `${title} led by ${investors[0]}`,
      round: round_,
      amount_millions: amount,
      currency: 'USD',
      lead_investor: investors[0],
      investors,
    },
  };
}

/** A change seen on the company's website. */
function websiteChangeData(d: DataDraw): Built {
  const { rng, subtype, name, domain } = d;
  const page = rng.pick(PAGES);
  const words = subtype.replace(/([A-Z])/g, ' $1').toLowerCase();
  const summary = `${name} website shows a ${words}`;
  const data: Record<string, unknown> = {
    summary,
    evidence: `"${rng.pick(['Introducing', 'Now available', 'New', 'Announcing'])} ${rng.pick(KEYWORDS)} for ${rng.pick(['teams', 'enterprises', 'developers', 'startups'])}"`,
    impact_rationale: `A ${words} often precedes new buying decisions.`,
    source_url: `https://${domain}${page}`,
    relevance: round(rng.float(0.2, 1), 2),
  };
  if (rng.chance(0.5)) {
    data['changes'] = [
      {
        page,
        change_type: rng.pick(['added', 'removed', 'modified']),
        before: rng.chance(0.5) ? null : 'Old copy',
        after: 'New copy',
      },
    ];
  }
  if (rng.chance(0.3)) {
    data['technologies'] = rng
      .sample(TECHNOLOGIES, rng.int(1, 3))
      .map((n) => ({ name: n, category: 'software', status: 'detected' }));
  }
  return { title: summary, data };
}

/** A technology added to or removed from the stack. */
function technologyChangeData(d: DataDraw): Built {
  const { rng, subtype, name, domain } = d;
  const tech = rng.pick(TECHNOLOGIES);
  const change = subtype === 'techAdded' ? 'added' : 'removed';
  const summary = `${name} ${change} ${tech}`;
  return {
    title: summary,
    data: { summary, technology: tech, category: 'software', change, source_url: `https://${domain}/` },
  };
}

/** A spike or drop of web traffic. */
function webTrafficData(d: DataDraw): Built {
  const { rng, subtype, domain } = d;
  const change = subtype === 'trafficSpike' ? rng.int(25, 300) : -rng.int(20, 70);
  return {
    title: `Traffic ${change > 0 ? 'spike' : 'drop'} at ${domain}`,
    data: {
      summary: `${domain} monthly visits changed ${change > 0 ? '+' : ''}${change}%`,
      monthly_visits: rng.int(1_000, 5_000_000),
      change_pct: change,
      period: 'month',
    },
  };
}

/** A patent applied for or granted. */
function patentData(d: DataDraw): Built {
  const { rng, subtype, t, name } = d;
  const topic = rng.pick([
    'data compression',
    'fraud detection',
    'battery management',
    'query planning',
    'image recognition',
    'network routing',
  ]);
  const status = subtype === 'patentGranted' ? 'granted' : 'pending';
  return {
    title: `${name} patent on ${topic}`,
    data: {
      summary: `${name} ${status === 'granted' ? 'was granted' : 'applied for'} a patent on ${topic}`,
      patent_number: `US${rng.int(10_000_000, 12_999_999)}`,
      title: `Systems and methods for ${topic}`,
      status,
      source_url: `https://patents.example.org/US${rng.hex(1)}`,
      filing_date: isoDate(t),
    },
  };
}

/** A government contract won. */
function governmentContractData(d: DataDraw): Built {
  const { rng, t, name } = d;
  const agency = rng.pick(AGENCIES);
  const amount = round(rng.float(0.2, 120), 1);
  return {
    title: `${name} wins $${amount}M contract`,
    data: {
      summary: `${name} was awarded a $${amount}M contract by the ${agency}`,
      agency,
      contract_id: `${rng.pick(['W', 'GS', 'DE', 'NN'])}${rng.int(100000, 999999)}`,
      amount_millions: amount,
      source_url: `https://contracts.example.gov/${rng.hex(1)}`,
      award_date: isoDate(t),
    },
  };
}

/** The title and `data` of one signal, by the kind of signal: every draw of `rng` in the same order as always. */
function buildData(
  rng: Rng,
  info: SignalTypeInfo,
  subtype: string,
  profile: CompanyProfile,
  person: Person | undefined,
  t: number,
): Built {
  const d: DataDraw = { rng, info, subtype, profile, person, t, name: profile.company.name, domain: profile.domain };
  switch (info.type) {
    case 'news':
      return newsData(d);
    case 'hiring-trends':
      return hiringTrendsData(d);
    case 'hiring-velocity':
      return hiringVelocityData(d);
    case 'work-milestones':
      return workMilestoneData(d);
    case 'linkedin-post-company':
    case 'linkedin-post-contact':
    case 'linkedin-posts':
    case 'reddit-mention':
    case 'twitter-post':
      return postData(rng, info, profile, person);
    case 'sec-10k':
      return annualReportData(d);
    case 'sec-10q':
    case 'sec-8k':
      return quarterlyOrCurrentReportData(d);
    case 'sec-6k':
    case 'sec-20f':
      return foreignIssuerReportData(d);
    case 'funding-round':
      return fundingRoundData(d);
    case 'website-intelligence':
      return websiteChangeData(d);
    case 'technology-change':
      return technologyChangeData(d);
    case 'web-traffic':
      return webTrafficData(d);
    case 'patent-filing':
      return patentData(d);
    case 'government-contract':
      return governmentContractData(d);
    default:
      return { title: `${d.name} ${subtype}`, data: { summary: `${d.name} ${subtype}` } };
  }
}
