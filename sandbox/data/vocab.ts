/**
 * Word lists the synthetic data is built from. Plain ASCII, no quotes or backslashes, bounded lengths: export
 * lines rely on that to stay within their fixed width.
 */

// biome-ignore format: data table
export const FIRST_NAMES = [
  'James', 'Mary', 'Robert', 'Patricia', 'John', 'Jennifer', 'Michael', 'Linda', 'David', 'Elizabeth', 'William',
  'Barbara', 'Richard', 'Susan', 'Joseph', 'Jessica', 'Thomas', 'Sarah', 'Charles', 'Karen', 'Daniel', 'Lisa',
  'Matthew', 'Nancy', 'Anthony', 'Sandra', 'Mark', 'Ashley', 'Steven', 'Emily', 'Paul', 'Michelle', 'Andrew',
  'Amanda', 'Joshua', 'Melissa', 'Kevin', 'Stephanie', 'Brian', 'Rebecca', 'George', 'Laura', 'Timothy', 'Sharon',
  'Ryan', 'Cynthia', 'Jacob', 'Kathleen', 'Gary', 'Amy', 'Nicholas', 'Angela', 'Eric', 'Anna', 'Jonathan', 'Ruth',
  'Stephen', 'Brenda', 'Larry', 'Pamela', 'Justin', 'Nicole', 'Scott', 'Katherine', 'Brandon', 'Samantha', 'Benjamin',
  'Christine', 'Samuel', 'Emma', 'Gregory', 'Catherine', 'Alexander', 'Debra', 'Patrick', 'Rachel', 'Frank',
  'Carolyn', 'Raymond', 'Janet', 'Jack', 'Maria', 'Dennis', 'Olivia', 'Jerry', 'Heather', 'Tyler', 'Helen', 'Aaron',
  'Diane', 'Priya', 'Wei', 'Aisha', 'Carlos', 'Sofia', 'Mateo', 'Yuki', 'Hiroshi', 'Fatima', 'Omar', 'Ingrid',
  'Lars', 'Chloe', 'Noah', 'Amara', 'Kwame', 'Elena', 'Luca', 'Mei', 'Arjun', 'Zara', 'Diego', 'Nadia', 'Ivan',
];

// biome-ignore format: data table
export const LAST_NAMES = [
  'Smith', 'Johnson', 'Williams', 'Brown', 'Jones', 'Garcia', 'Miller', 'Davis', 'Rodriguez', 'Martinez', 'Hernandez',
  'Lopez', 'Gonzalez', 'Wilson', 'Anderson', 'Thomas', 'Taylor', 'Moore', 'Jackson', 'Martin', 'Lee', 'Perez',
  'Thompson', 'White', 'Harris', 'Sanchez', 'Clark', 'Ramirez', 'Lewis', 'Robinson', 'Walker', 'Young', 'Allen',
  'King', 'Wright', 'Scott', 'Torres', 'Nguyen', 'Hill', 'Flores', 'Green', 'Adams', 'Nelson', 'Baker', 'Hall',
  'Rivera', 'Campbell', 'Mitchell', 'Carter', 'Roberts', 'Gomez', 'Phillips', 'Evans', 'Turner', 'Diaz', 'Parker',
  'Cruz', 'Edwards', 'Collins', 'Reyes', 'Stewart', 'Morris', 'Morales', 'Murphy', 'Cook', 'Rogers', 'Gutierrez',
  'Ortiz', 'Morgan', 'Cooper', 'Peterson', 'Bailey', 'Reed', 'Kelly', 'Howard', 'Ramos', 'Kim', 'Cox', 'Ward',
  'Richardson', 'Watson', 'Brooks', 'Chavez', 'Wood', 'James', 'Bennett', 'Gray', 'Mendoza', 'Ruiz', 'Hughes',
  'Price', 'Alvarez', 'Castillo', 'Sanders', 'Patel', 'Myers', 'Long', 'Ross', 'Foster', 'Jimenez', 'Chen', 'Wang',
  'Singh', 'Kumar', 'Tanaka', 'Sato', 'Okafor', 'Mensah', 'Schmidt', 'Muller', 'Rossi', 'Bianchi', 'Dubois',
  'Larsen', 'Novak', 'Kowalski', 'Ivanova', 'Haddad', 'Costa', 'Silva', 'Oliveira', 'Andersen', 'Berg', 'Fischer',
];

/** Syllables for generated company names (catalog companies). */
// biome-ignore format: data table
export const NAME_PARTS_A = [
  'zen', 'nova', 'cor', 'vel', 'ax', 'lum', 'quant', 'hel', 'orb', 'syn', 'ter', 'blu', 'kin', 'cir', 'mer', 'ver',
  'stra', 'pol', 'tri', 'arc', 'flux', 'gri', 'hex', 'ion', 'jun', 'kar', 'lyn', 'mod', 'neo', 'opt', 'pyx', 'rav',
  'sol', 'tal', 'ul', 'vox', 'wex', 'xen', 'yar', 'zor', 'bright', 'cloud', 'data', 'deep', 'edge', 'fast', 'green',
  'iron', 'swift', 'true',
];

// biome-ignore format: data table
export const NAME_PARTS_B = [
  'tro', 'vo', 'lex', 'ra', 'ix', 'io', 'ly', 'na', 'ta', 'on', 'ex', 'ify', 'ia', 'era', 'os', 'um', 'is', 'ent',
  'ica', 'ora', 'path', 'stack', 'forge', 'grid', 'loop', 'mind', 'point', 'ware', 'works', 'hub', 'base', 'line',
  'scale', 'shift', 'sync', 'wave', 'yard', 'labs', 'logic', 'bridge',
];

export const TLDS = ['com', 'com', 'com', 'com', 'io', 'ai', 'co', 'net', 'dev', 'tech', 'de', 'co.uk', 'fr'];

export const COMPANY_SUFFIXES = ['', '', '', '', 'Inc', 'Labs', 'Group', 'Technologies', 'Systems', 'Software', 'Corp'];

// biome-ignore format: data table
export const INDUSTRIES = [
  'Computer Software', 'Information Technology and Services', 'Internet', 'Financial Services', 'Banking',
  'Insurance', 'Hospital and Health Care', 'Medical Devices', 'Pharmaceuticals', 'Biotechnology', 'Retail',
  'Consumer Goods', 'Automotive', 'Logistics and Supply Chain', 'Telecommunications', 'Marketing and Advertising',
  'Real Estate', 'Construction', 'Education Management', 'E-Learning', 'Renewables and Environment',
  'Oil and Energy', 'Mechanical or Industrial Engineering', 'Semiconductors', 'Computer and Network Security',
  'Staffing and Recruiting', 'Management Consulting', 'Food and Beverages', 'Media Production', 'Government Relations',
];

export interface Tier {
  name: string;
  weight: number;
  employees: [number, number][];
  revenue: string[];
  signalsPerYear: [number, number];
}

/** Company size tiers: how common they are, their firmographics and how many signals a year they produce. */
// biome-ignore format: data table
export const TIERS: Tier[] = [
  { name: 'tiny', weight: 25, employees: [[1, 10], [11, 50]], revenue: ['$0-$1M', '$1M-$10M'], signalsPerYear: [1, 4] },
  { name: 'small', weight: 35, employees: [[11, 50], [51, 200]], revenue: ['$1M-$10M', '$10M-$50M'], signalsPerYear: [3, 8] },
  { name: 'mid', weight: 25, employees: [[201, 500], [501, 1000]], revenue: ['$50M-$100M', '$100M-$500M'], signalsPerYear: [6, 15] },
  { name: 'large', weight: 12, employees: [[1001, 5000], [5001, 10000]], revenue: ['$500M-$1B', '$1B-$10B'], signalsPerYear: [15, 40] },
  { name: 'enterprise', weight: 3, employees: [[10001, 50000], [50001, 250000]], revenue: ['$10B+'], signalsPerYear: [80, 220] },
];

export const EMPLOYEE_BUCKETS = ['1-10', '11-50', '51-200', '201-500', '501-1000', '1001-5000', '5001-10000', '10001+'];

export interface Place {
  city: string;
  state: string;
  country: string;
}

export const PLACES: Place[] = [
  { city: 'San Francisco', state: 'California', country: 'United States' },
  { city: 'New York', state: 'New York', country: 'United States' },
  { city: 'Austin', state: 'Texas', country: 'United States' },
  { city: 'Seattle', state: 'Washington', country: 'United States' },
  { city: 'Boston', state: 'Massachusetts', country: 'United States' },
  { city: 'Chicago', state: 'Illinois', country: 'United States' },
  { city: 'Denver', state: 'Colorado', country: 'United States' },
  { city: 'Atlanta', state: 'Georgia', country: 'United States' },
  { city: 'Toronto', state: 'Ontario', country: 'Canada' },
  { city: 'London', state: 'England', country: 'United Kingdom' },
  { city: 'Berlin', state: 'Berlin', country: 'Germany' },
  { city: 'Paris', state: 'Ile-de-France', country: 'France' },
  { city: 'Amsterdam', state: 'North Holland', country: 'Netherlands' },
  { city: 'Stockholm', state: 'Stockholm', country: 'Sweden' },
  { city: 'Bangalore', state: 'Karnataka', country: 'India' },
  { city: 'Singapore', state: 'Singapore', country: 'Singapore' },
  { city: 'Sydney', state: 'New South Wales', country: 'Australia' },
  { city: 'Tokyo', state: 'Tokyo', country: 'Japan' },
  { city: 'Sao Paulo', state: 'Sao Paulo', country: 'Brazil' },
  { city: 'Dublin', state: 'Leinster', country: 'Ireland' },
];

export const SENIORITIES = ['Cxo', 'Vp', 'Director', 'Manager', 'Staff'] as const;
export type Seniority = (typeof SENIORITIES)[number];
export const SENIORITY_WEIGHTS = [6, 10, 20, 28, 36];

// biome-ignore format: data table
export const DEPARTMENTS = [
  'Engineering', 'Sales', 'Marketing', 'Finance', 'Operations', 'Human Resources', 'Information Technology',
  'Product', 'Legal', 'Customer Success',
] as const;

/** Short department names used in job titles. */
export const DEPARTMENT_TITLE: Record<string, string> = {
  Engineering: 'Engineering',
  Sales: 'Sales',
  Marketing: 'Marketing',
  Finance: 'Finance',
  Operations: 'Operations',
  'Human Resources': 'People',
  'Information Technology': 'IT',
  Product: 'Product',
  Legal: 'Legal',
  'Customer Success': 'Customer Success',
};

export const CXO_TITLES: Record<string, string> = {
  Engineering: 'Chief Technology Officer',
  Sales: 'Chief Revenue Officer',
  Marketing: 'Chief Marketing Officer',
  Finance: 'Chief Financial Officer',
  Operations: 'Chief Operating Officer',
  'Human Resources': 'Chief People Officer',
  'Information Technology': 'Chief Information Officer',
  Product: 'Chief Product Officer',
  Legal: 'General Counsel',
  'Customer Success': 'Chief Customer Officer',
};

export const STAFF_TITLES: Record<string, string[]> = {
  Engineering: ['Software Engineer', 'Senior Software Engineer', 'Staff Engineer', 'DevOps Engineer'],
  Sales: ['Account Executive', 'Sales Development Representative', 'Enterprise Account Executive'],
  Marketing: ['Marketing Specialist', 'Content Strategist', 'Demand Generation Specialist'],
  Finance: ['Financial Analyst', 'Senior Accountant', 'FP and A Analyst'],
  Operations: ['Operations Analyst', 'Program Manager', 'Business Operations Associate'],
  'Human Resources': ['Recruiter', 'HR Business Partner', 'Talent Acquisition Partner'],
  'Information Technology': ['Systems Administrator', 'IT Analyst', 'Security Analyst'],
  Product: ['Product Designer', 'Product Analyst', 'UX Researcher'],
  Legal: ['Corporate Counsel', 'Paralegal', 'Contracts Manager'],
  'Customer Success': ['Customer Success Manager', 'Support Engineer', 'Implementation Specialist'],
};

// biome-ignore format: data table
export const TECHNOLOGIES = [
  'Salesforce', 'HubSpot', 'Snowflake', 'Databricks', 'Kubernetes', 'Terraform', 'AWS', 'Azure', 'Google Cloud',
  'Okta', 'Datadog', 'Segment', 'Stripe', 'Zendesk', 'Marketo', 'Workday', 'SAP', 'Oracle', 'MongoDB', 'Postgres',
  'Kafka', 'dbt', 'Looker', 'Tableau', 'Slack', 'Jira', 'GitHub', 'OpenAI', 'Temporal', 'Shopify',
];

// biome-ignore format: data table
export const COMPETITORS = [
  'Gong', 'Outreach', 'Apollo', 'ZoomInfo', 'Clearbit', 'Clay', 'Seamless', 'Lusha', 'Cognism', 'LeadIQ', '6sense',
  'Demandbase', 'Bombora', 'G2', 'TrustRadius',
];

// biome-ignore format: data table
export const PAIN_POINTS = [
  'data quality', 'pipeline coverage', 'churn', 'slow onboarding', 'manual reporting', 'security reviews',
  'cloud costs', 'hiring delays', 'tool sprawl', 'long sales cycles', 'compliance overhead', 'legacy systems',
];

// biome-ignore format: data table
export const INITIATIVES = [
  'AI adoption', 'cloud migration', 'international expansion', 'cost reduction', 'platform consolidation',
  'zero trust', 'product-led growth', 'data warehouse modernization', 'customer 360', 'SOC 2 certification',
];

// biome-ignore format: data table
export const KEYWORDS = [
  'launch', 'hiring', 'partnership', 'webinar', 'funding', 'migration', 'roadmap', 'integration', 'automation',
  'growth', 'security', 'analytics', 'platform', 'customers', 'revenue',
];

export const PUBLISHERS = [
  'TechCrunch',
  'Reuters',
  'Bloomberg',
  'Business Wire',
  'PR Newswire',
  'VentureBeat',
  'Forbes',
];

// biome-ignore format: data table
export const INVESTORS = [
  'Sequoia Capital', 'Andreessen Horowitz', 'Accel', 'Index Ventures', 'Insight Partners', 'Tiger Global', 'Lightspeed',
  'General Catalyst', 'Bessemer Venture Partners', 'Greylock', 'Battery Ventures', 'Y Combinator',
];

// biome-ignore format: data table
export const AGENCIES = [
  'Department of Defense', 'General Services Administration', 'Department of Energy', 'NASA',
  'Department of Health and Human Services', 'Department of Veterans Affairs',
];

export const PAGES = ['/pricing', '/product', '/about', '/careers', '/customers', '/partners', '/blog', '/security'];

// biome-ignore format: data table
export const FREE_PROVIDERS = new Set([
  'gmail.com', 'googlemail.com', 'yahoo.com', 'hotmail.com', 'outlook.com', 'live.com', 'aol.com', 'icloud.com',
  'me.com', 'proton.me', 'protonmail.com', 'gmx.com', 'gmx.de', 'web.de', 'yandex.com', 'mail.com', 'zoho.com',
]);

// biome-ignore format: data table
export const DISPOSABLE_DOMAINS = new Set([
  'mailinator.com', '10minutemail.com', 'guerrillamail.com', 'tempmail.com', 'temp-mail.org', 'yopmail.com',
  'trashmail.com', 'throwawaymail.com', 'sharklasers.com', 'getnada.com', 'dispostable.com', 'maildrop.cc',
]);

/** Common typos of popular mail domains and their correction. */
export const DOMAIN_TYPOS: Record<string, string> = {
  'gmial.com': 'gmail.com',
  'gmai.com': 'gmail.com',
  'gmail.co': 'gmail.com',
  'gamil.com': 'gmail.com',
  'gnail.com': 'gmail.com',
  'gmail.con': 'gmail.com',
  'hotmial.com': 'hotmail.com',
  'hotmal.com': 'hotmail.com',
  'yaho.com': 'yahoo.com',
  'yahooo.com': 'yahoo.com',
  'outlok.com': 'outlook.com',
  'outloo.com': 'outlook.com',
  'iclod.com': 'icloud.com',
};

// biome-ignore format: data table
export const ROLE_LOCAL_PARTS = new Set([
  'info', 'sales', 'support', 'admin', 'contact', 'hello', 'help', 'office', 'billing', 'hr', 'jobs', 'careers',
  'marketing', 'team', 'noreply', 'no-reply', 'postmaster', 'webmaster', 'abuse', 'accounts', 'press', 'security',
]);
