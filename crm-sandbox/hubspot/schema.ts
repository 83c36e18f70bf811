/**
 * The properties and property groups a fresh portal has for companies and contacts: a few of HubSpot's default ones,
 * among them read-only and calculated ones (`modificationMetadata.readOnlyValue`), so that a writer's pre-flight
 * sees what a real portal shows it.
 */

export type HubspotObject = 'companies' | 'contacts';
export const OBJECTS: readonly HubspotObject[] = ['companies', 'contacts'];

export type PropertyType = 'string' | 'number' | 'date' | 'datetime' | 'enumeration' | 'bool';
export const PROPERTY_TYPES: readonly PropertyType[] = ['string', 'number', 'date', 'datetime', 'enumeration', 'bool'];

export interface PropertyOption {
  label: string;
  value: string;
  displayOrder: number;
  hidden: boolean;
}

export interface PropertyDefinition {
  name: string;
  label: string;
  type: PropertyType;
  fieldType: string;
  groupName: string;
  description: string;
  options: PropertyOption[];
  displayOrder: number;
  calculated: boolean;
  externalOptions: boolean;
  hasUniqueValue: boolean;
  hidden: boolean;
  hubspotDefined: boolean;
  formField: boolean;
  modificationMetadata: { archivable: boolean; readOnlyDefinition: boolean; readOnlyValue: boolean };
  createdAt: string;
  updatedAt: string;
  archived: boolean;
}

export interface PropertyGroupDefinition {
  name: string;
  label: string;
  displayOrder: number;
  archived: boolean;
}

const CREATED = '2020-01-01T00:00:00.000Z';

function option(value: string, index: number): PropertyOption {
  return { label: value.replace(/_/g, ' ').toLowerCase(), value, displayOrder: index, hidden: false };
}

interface Seed {
  name: string;
  type: PropertyType;
  fieldType?: string;
  readOnly?: boolean;
  calculated?: boolean;
  options?: string[];
}

const FIELD_TYPES: Record<PropertyType, string> = {
  string: 'text',
  number: 'number',
  date: 'date',
  datetime: 'date',
  enumeration: 'select',
  bool: 'booleancheckbox',
};

function hubspotDefined(seed: Seed, groupName: string, index: number): PropertyDefinition {
  const readOnly = seed.readOnly === true || seed.calculated === true;
  return {
    name: seed.name,
    label: seed.name.replace(/_/g, ' '),
    type: seed.type,
    fieldType: seed.fieldType ?? (seed.calculated ? 'calculation_equation' : FIELD_TYPES[seed.type]),
    groupName,
    description: '',
    options: (seed.options ?? (seed.type === 'bool' ? ['true', 'false'] : [])).map(option),
    displayOrder: index,
    calculated: seed.calculated === true,
    externalOptions: false,
    hasUniqueValue: seed.name === 'hs_object_id',
    hidden: false,
    hubspotDefined: true,
    formField: !readOnly,
    modificationMetadata: { archivable: false, readOnlyDefinition: true, readOnlyValue: readOnly },
    createdAt: CREATED,
    updatedAt: CREATED,
    archived: false,
  };
}

const LIFECYCLE = ['subscriber', 'lead', 'marketingqualifiedlead', 'salesqualifiedlead', 'opportunity', 'customer'];

const COMMON: Seed[] = [
  { name: 'hs_object_id', type: 'number', readOnly: true },
  { name: 'createdate', type: 'datetime', readOnly: true },
  { name: 'lifecyclestage', type: 'enumeration', fieldType: 'radio', options: LIFECYCLE },
  { name: 'phone', type: 'string', fieldType: 'phonenumber' },
];

const SEEDS: Record<HubspotObject, { group: string; label: string; seeds: Seed[] }> = {
  companies: {
    group: 'companyinformation',
    label: 'Company information',
    seeds: [
      ...COMMON,
      { name: 'hs_lastmodifieddate', type: 'datetime', readOnly: true },
      { name: 'name', type: 'string' },
      { name: 'domain', type: 'string' },
      { name: 'website', type: 'string' },
      { name: 'city', type: 'string' },
      { name: 'country', type: 'string' },
      { name: 'description', type: 'string', fieldType: 'textarea' },
      { name: 'linkedin_company_page', type: 'string' },
      { name: 'industry', type: 'enumeration', options: ['COMPUTER_SOFTWARE', 'FINANCIAL_SERVICES', 'RETAIL'] },
      { name: 'numberofemployees', type: 'number' },
      { name: 'annualrevenue', type: 'number' },
      { name: 'is_public', type: 'bool' },
      { name: 'founded_year', type: 'string' },
      { name: 'num_associated_contacts', type: 'number', calculated: true },
    ],
  },
  contacts: {
    group: 'contactinformation',
    label: 'Contact information',
    seeds: [
      ...COMMON,
      { name: 'lastmodifieddate', type: 'datetime', readOnly: true },
      { name: 'email', type: 'string' },
      { name: 'firstname', type: 'string' },
      { name: 'lastname', type: 'string' },
      { name: 'jobtitle', type: 'string' },
      { name: 'company', type: 'string' },
      { name: 'website', type: 'string' },
      { name: 'hs_email_bounce', type: 'number', calculated: true },
    ],
  },
};

/** The name of the property HubSpot keeps an object's last change in. */
export function lastModifiedProperty(object: HubspotObject): string {
  return object === 'companies' ? 'hs_lastmodifieddate' : 'lastmodifieddate';
}

export function defaultProperties(object: HubspotObject): PropertyDefinition[] {
  const { group, seeds } = SEEDS[object];
  return seeds.map((seed, index) => hubspotDefined(seed, group, index));
}

export function defaultGroups(object: HubspotObject): PropertyGroupDefinition[] {
  const { group, label } = SEEDS[object];
  return [{ name: group, label, displayOrder: 0, archived: false }];
}

/** The object's name in HubSpot's messages (`COMPANY`, `CONTACT`). */
export function objectLabel(object: HubspotObject): string {
  return object === 'companies' ? 'COMPANY' : 'CONTACT';
}
