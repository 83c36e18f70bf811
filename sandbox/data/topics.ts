/**
 * The buyer-intent topic catalog: 38,000 topics `b2b_1` .. `b2b_38000`. A topic's name and category are computed
 * from its number (a seeded bijection onto a product of word lists, so names never repeat); nothing is stored.
 */
import { hash2, hashString } from '../random.ts';

export const TOPIC_COUNT = 38_000;

// biome-ignore format: data table
const QUALIFIERS = [
  'Cloud', 'Enterprise', 'AI-Powered', 'Managed', 'Open Source', 'Real-Time', 'B2B', 'Mobile', 'Embedded', 'Hybrid',
  'Serverless', 'Automated', 'Predictive', 'Secure', 'Distributed', 'Edge', 'Low-Code', 'Headless', 'Federated',
  'Multi-Tenant', 'Cross-Border', 'Omnichannel', 'Self-Service', 'Usage-Based', 'Vertical', 'Regulated',
  'Privacy-First', 'Composable', 'Industrial', 'Green',
];

// biome-ignore format: data table
const SUBJECTS = [
  'Data Warehousing', 'Identity Management', 'Payroll', 'Endpoint Security', 'Customer Data Platforms', 'CRM',
  'Marketing Automation', 'Sales Engagement', 'Observability', 'Log Management', 'Backup and Recovery',
  'Email Security', 'Procurement', 'Expense Management', 'Supply Chain Planning', 'Fleet Management',
  'Learning Management', 'Applicant Tracking', 'Contract Management', 'E-Signature', 'Video Conferencing',
  'Help Desk', 'Knowledge Management', 'Product Analytics', 'A/B Testing', 'Feature Flags', 'API Management',
  'Service Mesh', 'Container Security', 'Vulnerability Management', 'SIEM', 'Firewall', 'SD-WAN', 'VPN',
  'Zero Trust Access', 'Data Governance', 'Master Data Management', 'ETL', 'Reverse ETL', 'BI Dashboards',
  'Forecasting', 'Revenue Operations', 'Billing', 'Tax Compliance', 'Accounts Payable', 'Treasury', 'Risk Scoring',
  'Fraud Prevention', 'KYC', 'Chatbots', 'Speech Analytics', 'Document Processing', 'Translation', 'CMS',
  'E-Commerce Platforms', 'Inventory Management', 'Point of Sale', 'Workforce Management', 'Scheduling',
  'Field Service', 'Asset Tracking', 'IoT Platforms', 'Digital Twins', 'CAD', 'PLM', 'ERP', 'HRIS',
  'Benefits Administration', 'Employee Engagement', 'Performance Management', 'Vector Databases', 'LLM Ops',
  'Model Monitoring', 'Data Labeling', 'GPU Cloud', 'Storage Arrays', 'CDN', 'DNS', 'Email Delivery', 'SMS Messaging',
  'Customer Feedback', 'Survey Tools', 'Social Listening', 'Influencer Marketing', 'Ad Tech', 'Attribution',
  'SEO Tools', 'Web Hosting', 'Password Management', 'Privileged Access', 'Data Loss Prevention', 'Email Archiving',
  'eDiscovery', 'GRC', 'Audit Management', 'Carbon Accounting', 'Energy Management', 'Telematics', 'Route Planning',
  'Warehouse Robotics',
];

const ASPECTS = [
  '',
  ' Software',
  ' Services',
  ' Pricing',
  ' Migration',
  ' Integration',
  ' Consulting',
  ' Vendors',
  ' Best Practices',
  ' Alternatives',
  ' Compliance',
  ' Implementation',
  ' Training',
];

// biome-ignore format: data table
const CATEGORIES = [
  'Security', 'Data and Analytics', 'Sales and Marketing', 'Finance', 'Human Resources', 'IT Infrastructure',
  'Operations', 'Customer Experience', 'AI and Machine Learning', 'Industry Solutions',
];

const SPACE = QUALIFIERS.length * SUBJECTS.length * ASPECTS.length; // 39,000 >= TOPIC_COUNT

export interface Topic {
  topic_id: string;
  name: string;
  category: string;
}

/** `b2b_123` → 123 when it is in the catalog, else undefined. */
export function topicNumber(id: string): number | undefined {
  const m = /^b2b_([1-9][0-9]{0,5})$/.exec(id);
  if (!m) return undefined;
  const n = Number(m[1]);
  return n >= 1 && n <= TOPIC_COUNT ? n : undefined;
}

export const TOPIC_ID_FORMAT = /^b2b_[0-9]+$/;

function gcd(a: number, b: number): number {
  while (b) [a, b] = [b, a % b];
  return a;
}

/** A seeded affine permutation of the name space: distinct topic numbers get distinct names. */
function permutation(seed: number): { a: number; b: number } {
  let a = (hashString('topics-a', seed) % (SPACE - 1)) + 1;
  while (gcd(a, SPACE) !== 1) a = (a % (SPACE - 1)) + 1;
  return { a, b: hashString('topics-b', seed) % SPACE };
}

const cache = new Map<number, { a: number; b: number }>();

function perm(seed: number): { a: number; b: number } {
  let p = cache.get(seed);
  if (!p) {
    if (cache.size > 64) cache.clear();
    p = permutation(seed);
    cache.set(seed, p);
  }
  return p;
}

export function topic(seed: number, n: number): Topic {
  const { a, b } = perm(seed);
  const x = (a * (n - 1) + b) % SPACE; // a < 39,000 and n < 38,001: no precision loss
  const q = x % QUALIFIERS.length;
  const s = Math.floor(x / QUALIFIERS.length) % SUBJECTS.length;
  const asp = Math.floor(x / (QUALIFIERS.length * SUBJECTS.length));
  const category = CATEGORIES[hash2(s, 0xca7) % CATEGORIES.length]!;
  return { topic_id: `b2b_${n}`, name: `${QUALIFIERS[q]} ${SUBJECTS[s]}${ASPECTS[asp]}`, category };
}
