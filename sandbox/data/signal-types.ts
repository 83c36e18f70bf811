/**
 * The catalog of signal types the sandbox produces: spec 2.1's types plus a few more from the source families of
 * spec section 1, each with its subtypes, category (the five webhook categories), source and relative frequency.
 */

export type Category = 'news' | 'hiring' | 'social' | 'financial' | 'web';
export type Association = 'company' | 'contact';
/** Which companies produce a type: every company, US-listed ones, foreign-listed ones, or private ones. */
export type Audience = 'all' | 'us_public' | 'foreign_public' | 'private';

export interface SignalTypeInfo {
  type: string;
  category: Category;
  source: string;
  association: Association;
  audience: Audience;
  weight: number;
  subtypes: string[];
  /** Relative weights of the subtypes (uniform when absent). */
  subtypeWeights?: number[];
  description: string;
}

const WEBSITE_SUBTYPES = [
  'productLaunch',
  'pricingChange',
  'featureLaunch',
  'partnershipAnnouncement',
  'executiveChange',
  'acquisition',
  'integrationLaunch',
  'caseStudyPublished',
  'customerLogoAdded',
  'customerLogoRemoved',
  'newOfficeLocation',
  'careersPageUpdate',
  'securityPageUpdate',
  'complianceCertification',
  'rebrand',
  'messagingChange',
  'newWebinar',
  'eventAnnouncement',
  'leadershipPageUpdate',
  'boardChange',
  'investorRelationsUpdate',
  'pressRelease',
  'productDeprecation',
  'freeTrialLaunch',
  'planAdded',
  'planRemoved',
  'enterprisePlanLaunch',
  'apiLaunch',
  'marketplaceListing',
  'localizationAdded',
  'newVertical',
  'competitorComparisonPage',
  'roadmapUpdate',
  'statusPageIncident',
  'trustCenterLaunch',
  'aiFeatureLaunch',
  'openSourceRelease',
  'documentationOverhaul',
]; // 38, as spec 2.1 says

/**
 * The types by name: association `company` and audience `all` unless the entry says otherwise; subtypes
 * given as a list are equally likely, given as `name: weight` they are drawn by those relative weights.
 */
const TYPES = {
  news: { category: 'news', source: 'news', weight: 14, subtypes: { companyNews: 16, acquires: 2, merges_with: 1 } },
  'hiring-trends': { category: 'hiring', source: 'job_postings', weight: 6, subtypes: ['hiringTrends'] },
  'hiring-velocity': { category: 'hiring', source: 'job_postings', weight: 5, subtypes: ['hiringVelocity'] },
  'work-milestones': {
    category: 'hiring',
    source: 'people_moves',
    association: 'contact',
    weight: 8,
    subtypes: { jobChange: 3, promotion: 1 },
  },
  'linkedin-post-company': { category: 'social', source: 'linkedin', weight: 10, subtypes: ['companyPost'] },
  'linkedin-post-contact': {
    category: 'social',
    source: 'linkedin',
    association: 'contact',
    weight: 8,
    subtypes: ['contactPost'],
  },
  'linkedin-posts': { category: 'social', source: 'linkedin', weight: 3, subtypes: ['post'] },
  'reddit-mention': { category: 'social', source: 'reddit', weight: 3, subtypes: ['discussion'] },
  'twitter-post': { category: 'social', source: 'twitter', weight: 4, subtypes: ['tweet'] },
  'sec-10k': { category: 'financial', source: 'sec', audience: 'us_public', weight: 1, subtypes: ['annualReport'] },
  'sec-10q': {
    category: 'financial',
    source: 'sec',
    audience: 'us_public',
    weight: 2.5,
    subtypes: ['cashFlowConcern', 'revenueGrowth', 'marginPressure'],
  },
  'sec-8k': {
    category: 'financial',
    source: 'sec',
    audience: 'us_public',
    weight: 3,
    subtypes: { cfoChange: 1, earningsRelease: 4, acquisitionAnnounced: 1, acquisitionCompleted: 1 },
  },
  'sec-6k': {
    category: 'financial',
    source: 'sec',
    audience: 'foreign_public',
    weight: 3,
    subtypes: ['foreignReport'],
  },
  'sec-20f': {
    category: 'financial',
    source: 'sec',
    audience: 'foreign_public',
    weight: 1,
    subtypes: ['foreignAnnualReport'],
  },
  'funding-round': {
    category: 'financial',
    source: 'financial_events',
    audience: 'private',
    weight: 1.5,
    subtypes: { seedRound: 3, seriesA: 3, seriesB: 2, seriesC: 1, growthRound: 1, debtFinancing: 1 },
  },
  'website-intelligence': { category: 'web', source: 'website', weight: 12, subtypes: WEBSITE_SUBTYPES },
  'technology-change': {
    category: 'web',
    source: 'technographics',
    weight: 6,
    subtypes: { techAdded: 3, techRemoved: 1 },
  },
  'web-traffic': { category: 'web', source: 'web_traffic', weight: 4, subtypes: ['trafficSpike', 'trafficDrop'] },
  'patent-filing': {
    category: 'news',
    source: 'ip_records',
    weight: 2,
    subtypes: ['patentGranted', 'patentApplication'],
  },
  'government-contract': { category: 'news', source: 'government_records', weight: 1, subtypes: ['contractAwarded'] },
} as const satisfies Record<string, TypeFacts>;

interface TypeFacts {
  category: Category;
  source: string;
  association?: Association;
  audience?: Audience;
  weight: number;
  subtypes: readonly string[] | Readonly<Record<string, number>>;
}

/** What each type is, as `GET /v1/signals/types` describes it. */
const DESCRIPTIONS: Record<keyof typeof TYPES, string> = {
  news: 'Press coverage and announcements about the company.',
  'hiring-trends': 'Which roles the company is hiring for most.',
  'hiring-velocity': 'Change in the number of open roles.',
  'work-milestones': 'People joining the company or moving up inside it.',
  'linkedin-post-company': 'Posts published by the company page on LinkedIn.',
  'linkedin-post-contact': 'Posts published by employees on LinkedIn.',
  'linkedin-posts': 'LinkedIn posts that mention the company.',
  'reddit-mention': 'Community discussion threads that mention the company.',
  'twitter-post': 'Posts by or about the company on X/Twitter.',
  'sec-10k': 'Annual reports filed with the SEC.',
  'sec-10q': 'Quarterly reports filed with the SEC.',
  'sec-8k': 'Current reports of material events filed with the SEC.',
  'sec-6k': 'Reports of foreign private issuers filed with the SEC.',
  'sec-20f': 'Annual reports of foreign private issuers filed with the SEC.',
  'funding-round': 'Venture rounds and debt financing.',
  'website-intelligence': 'Meaningful changes detected on the company website.',
  'technology-change': 'Technologies added to or removed from the company stack.',
  'web-traffic': 'Large changes in website traffic.',
  'patent-filing': 'Patents granted to or applied for by the company.',
  'government-contract': 'Public-sector contracts awarded to the company.',
};

export const SIGNAL_TYPES: SignalTypeInfo[] = (Object.keys(TYPES) as (keyof typeof TYPES)[]).map((type) => {
  const t: TypeFacts = TYPES[type];
  const weighted = !Array.isArray(t.subtypes);
  return {
    type,
    category: t.category,
    source: t.source,
    association: t.association ?? 'company',
    audience: t.audience ?? 'all',
    weight: t.weight,
    subtypes: weighted ? Object.keys(t.subtypes) : [...(t.subtypes as readonly string[])],
    ...(weighted ? { subtypeWeights: Object.values(t.subtypes) } : {}),
    description: DESCRIPTIONS[type],
  };
});

export const TYPE_INDEX = new Map<string, number>(SIGNAL_TYPES.map((t, i) => [t.type, i]));
export const ALL_SUBTYPES = new Set<string>(SIGNAL_TYPES.flatMap((t) => t.subtypes));
/** Types a person's own timeline produces. */
export const PERSON_TYPES = ['work-milestones', 'linkedin-post-contact'].map((t) => TYPE_INDEX.get(t)!);
export const SOCIAL_TYPES = new Set(
  ['linkedin-post-company', 'linkedin-post-contact', 'linkedin-posts', 'reddit-mention', 'twitter-post'].map(
    (t) => TYPE_INDEX.get(t)!,
  ),
);

/** Cumulative subtype weights per type index. */
export const SUBTYPE_CUMULATIVE: number[][] = SIGNAL_TYPES.map((t) => {
  const weights = t.subtypeWeights ?? t.subtypes.map(() => 1);
  let sum = 0;
  return weights.map((w) => {
    sum += w;
    return sum;
  });
});

export type ListingKind = 'us_public' | 'foreign_public' | 'private';

/** Cumulative type weights (over all type indexes) for a company of the given listing kind. */
function typeCumulative(kind: ListingKind): number[] {
  let sum = 0;
  return SIGNAL_TYPES.map((t) => {
    if (t.audience === 'all' || t.audience === kind) sum += t.weight;
    return sum;
  });
}

export const COMPANY_TYPE_CUMULATIVE: Record<ListingKind, number[]> = {
  us_public: typeCumulative('us_public'),
  foreign_public: typeCumulative('foreign_public'),
  private: typeCumulative('private'),
};

/** Person timelines: job moves are rarer than posts. */
export const PERSON_TYPE_CUMULATIVE: number[] = (() => {
  let sum = 0;
  return SIGNAL_TYPES.map((t) => {
    if (t.type === 'work-milestones') sum += 1;
    if (t.type === 'linkedin-post-contact') sum += 3;
    return sum;
  });
})();
