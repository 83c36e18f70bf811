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

export const SIGNAL_TYPES: SignalTypeInfo[] = [
  {
    type: 'news',
    category: 'news',
    source: 'news',
    association: 'company',
    audience: 'all',
    weight: 14,
    subtypes: ['companyNews', 'acquires', 'merges_with'],
    subtypeWeights: [16, 2, 1],
    description: 'Press coverage and announcements about the company.',
  },
  {
    type: 'hiring-trends',
    category: 'hiring',
    source: 'job_postings',
    association: 'company',
    audience: 'all',
    weight: 6,
    subtypes: ['hiringTrends'],
    description: 'Which roles the company is hiring for most.',
  },
  {
    type: 'hiring-velocity',
    category: 'hiring',
    source: 'job_postings',
    association: 'company',
    audience: 'all',
    weight: 5,
    subtypes: ['hiringVelocity'],
    description: 'Change in the number of open roles.',
  },
  {
    type: 'work-milestones',
    category: 'hiring',
    source: 'people_moves',
    association: 'contact',
    audience: 'all',
    weight: 8,
    subtypes: ['jobChange', 'promotion'],
    subtypeWeights: [3, 1],
    description: 'People joining the company or moving up inside it.',
  },
  {
    type: 'linkedin-post-company',
    category: 'social',
    source: 'linkedin',
    association: 'company',
    audience: 'all',
    weight: 10,
    subtypes: ['companyPost'],
    description: 'Posts published by the company page on LinkedIn.',
  },
  {
    type: 'linkedin-post-contact',
    category: 'social',
    source: 'linkedin',
    association: 'contact',
    audience: 'all',
    weight: 8,
    subtypes: ['contactPost'],
    description: 'Posts published by employees on LinkedIn.',
  },
  {
    type: 'linkedin-posts',
    category: 'social',
    source: 'linkedin',
    association: 'company',
    audience: 'all',
    weight: 3,
    subtypes: ['post'],
    description: 'LinkedIn posts that mention the company.',
  },
  {
    type: 'reddit-mention',
    category: 'social',
    source: 'reddit',
    association: 'company',
    audience: 'all',
    weight: 3,
    subtypes: ['discussion'],
    description: 'Community discussion threads that mention the company.',
  },
  {
    type: 'twitter-post',
    category: 'social',
    source: 'twitter',
    association: 'company',
    audience: 'all',
    weight: 4,
    subtypes: ['tweet'],
    description: 'Posts by or about the company on X/Twitter.',
  },
  {
    type: 'sec-10k',
    category: 'financial',
    source: 'sec',
    association: 'company',
    audience: 'us_public',
    weight: 1,
    subtypes: ['annualReport'],
    description: 'Annual reports filed with the SEC.',
  },
  {
    type: 'sec-10q',
    category: 'financial',
    source: 'sec',
    association: 'company',
    audience: 'us_public',
    weight: 2.5,
    subtypes: ['cashFlowConcern', 'revenueGrowth', 'marginPressure'],
    description: 'Quarterly reports filed with the SEC.',
  },
  {
    type: 'sec-8k',
    category: 'financial',
    source: 'sec',
    association: 'company',
    audience: 'us_public',
    weight: 3,
    subtypes: ['cfoChange', 'earningsRelease', 'acquisitionAnnounced', 'acquisitionCompleted'],
    subtypeWeights: [1, 4, 1, 1],
    description: 'Current reports of material events filed with the SEC.',
  },
  {
    type: 'sec-6k',
    category: 'financial',
    source: 'sec',
    association: 'company',
    audience: 'foreign_public',
    weight: 3,
    subtypes: ['foreignReport'],
    description: 'Reports of foreign private issuers filed with the SEC.',
  },
  {
    type: 'sec-20f',
    category: 'financial',
    source: 'sec',
    association: 'company',
    audience: 'foreign_public',
    weight: 1,
    subtypes: ['foreignAnnualReport'],
    description: 'Annual reports of foreign private issuers filed with the SEC.',
  },
  {
    type: 'funding-round',
    category: 'financial',
    source: 'financial_events',
    association: 'company',
    audience: 'private',
    weight: 1.5,
    subtypes: ['seedRound', 'seriesA', 'seriesB', 'seriesC', 'growthRound', 'debtFinancing'],
    subtypeWeights: [3, 3, 2, 1, 1, 1],
    description: 'Venture rounds and debt financing.',
  },
  {
    type: 'website-intelligence',
    category: 'web',
    source: 'website',
    association: 'company',
    audience: 'all',
    weight: 12,
    subtypes: WEBSITE_SUBTYPES,
    description: 'Meaningful changes detected on the company website.',
  },
  {
    type: 'technology-change',
    category: 'web',
    source: 'technographics',
    association: 'company',
    audience: 'all',
    weight: 6,
    subtypes: ['techAdded', 'techRemoved'],
    subtypeWeights: [3, 1],
    description: 'Technologies added to or removed from the company stack.',
  },
  {
    type: 'web-traffic',
    category: 'web',
    source: 'web_traffic',
    association: 'company',
    audience: 'all',
    weight: 4,
    subtypes: ['trafficSpike', 'trafficDrop'],
    description: 'Large changes in website traffic.',
  },
  {
    type: 'patent-filing',
    category: 'news',
    source: 'ip_records',
    association: 'company',
    audience: 'all',
    weight: 2,
    subtypes: ['patentGranted', 'patentApplication'],
    description: 'Patents granted to or applied for by the company.',
  },
  {
    type: 'government-contract',
    category: 'news',
    source: 'government_records',
    association: 'company',
    audience: 'all',
    weight: 1,
    subtypes: ['contractAwarded'],
    description: 'Public-sector contracts awarded to the company.',
  },
];

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
