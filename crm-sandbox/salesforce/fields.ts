/**
 * The objects the stand-in holds and their fields, as the sObject Describe resource reports them
 * (`/services/data/vXX.X/sobjects/{object}/describe`): standard fields of Account, Contact and Lead, and custom
 * fields (`…__c`) given at start. A field's `type` is Salesforce's own (`double`, `int`, `currency`, `percent`,
 * `date`, `datetime`, `string`, `textarea`, `url`, `email`, `phone`, `picklist`, `boolean`, `id`, `reference`).
 */
import { z } from 'zod';

export const OBJECTS = ['Account', 'Contact', 'Lead'] as const;
export type ObjectName = (typeof OBJECTS)[number];

export const KEY_PREFIX: Record<ObjectName, string> = { Account: '001', Contact: '003', Lead: '00Q' };

export const fieldSpec = z.object({
  name: z.string().regex(/^[A-Za-z][A-Za-z0-9_]*$/),
  label: z.string().optional(),
  type: z.enum([
    'double',
    'int',
    'currency',
    'percent',
    'date',
    'datetime',
    'string',
    'textarea',
    'url',
    'email',
    'phone',
    'picklist',
    'boolean',
    'id',
    'reference',
  ]),
  length: z.number().int().positive().optional(),
  precision: z.number().int().optional(),
  scale: z.number().int().optional(),
  /** False for formula, roll-up and system fields. Default true. */
  updateable: z.boolean().optional(),
  calculated: z.boolean().optional(),
});
export type FieldSpec = z.infer<typeof fieldSpec>;

const text = (name: string, length: number, type: FieldSpec['type'] = 'string'): FieldSpec => ({ name, type, length });
const system = (name: string, type: FieldSpec['type']): FieldSpec => ({ name, type, updateable: false });

const STANDARD: Record<ObjectName, FieldSpec[]> = {
  Account: [
    system('Id', 'id'),
    text('Name', 255),
    text('Website', 255, 'url'),
    text('Industry', 255, 'picklist'),
    { name: 'NumberOfEmployees', type: 'int', precision: 8, scale: 0 },
    { name: 'AnnualRevenue', type: 'currency', precision: 18, scale: 0 },
    system('CreatedDate', 'datetime'),
    system('LastModifiedDate', 'datetime'),
  ],
  Contact: [
    system('Id', 'id'),
    text('FirstName', 40),
    text('LastName', 80),
    text('Email', 80, 'email'),
    text('Title', 128),
    { name: 'AccountId', type: 'reference', length: 18 },
    system('CreatedDate', 'datetime'),
    system('LastModifiedDate', 'datetime'),
  ],
  Lead: [
    system('Id', 'id'),
    text('FirstName', 40),
    text('LastName', 80),
    text('Company', 255),
    text('Email', 80, 'email'),
    text('Title', 128),
    system('CreatedDate', 'datetime'),
    system('LastModifiedDate', 'datetime'),
  ],
};

/** Custom fields each object gets when none are given: one of each kind the kit writes, and a formula. */
export const DEFAULT_CUSTOM_FIELDS: FieldSpec[] = [
  { name: 'Signal_Count__c', type: 'double', precision: 18, scale: 0 },
  { name: 'Signal_Score__c', type: 'percent', precision: 5, scale: 2 },
  { name: 'Signal_Last_Seen__c', type: 'date' },
  { name: 'Signal_Detected_At__c', type: 'datetime' },
  text('Signal_Company_Name__c', 255),
  text('Signal_Summary__c', 255, 'textarea'),
  text('Signal_Website__c', 255, 'url'),
  { name: 'Signal_Formula__c', type: 'double', precision: 18, scale: 0, updateable: false, calculated: true },
];

export interface ObjectSchema {
  name: ObjectName;
  fields: Map<string, FieldSpec>;
  /** Field names by lower case: the API matches field names case-insensitively. */
  byLowerName: Map<string, FieldSpec>;
}

export function objectSchema(name: ObjectName, custom: FieldSpec[]): ObjectSchema {
  const all = [...STANDARD[name], ...custom];
  return {
    name,
    fields: new Map(all.map((f) => [f.name, f])),
    byLowerName: new Map(all.map((f) => [f.name.toLowerCase(), f])),
  };
}

const SOAP_TYPE: Partial<Record<FieldSpec['type'], string>> = {
  double: 'xsd:double',
  currency: 'xsd:double',
  percent: 'xsd:double',
  int: 'xsd:int',
  date: 'xsd:date',
  datetime: 'xsd:dateTime',
  boolean: 'xsd:boolean',
  id: 'tns:ID',
  reference: 'tns:ID',
};

function labelOf(name: string): string {
  return name.replace(/__c$/, '').replaceAll('_', ' ');
}

function describeField(field: FieldSpec): Record<string, unknown> {
  const updateable = field.updateable ?? true;
  const isText = field.length !== undefined && !['id', 'reference'].includes(field.type);
  return {
    name: field.name,
    label: field.label ?? labelOf(field.name),
    type: field.type,
    soapType: SOAP_TYPE[field.type] ?? 'xsd:string',
    length: isText ? field.length : 0,
    byteLength: isText ? (field.length ?? 0) * 3 : 0,
    precision: field.precision ?? 0,
    scale: field.scale ?? 0,
    digits: field.type === 'int' ? (field.precision ?? 9) : 0,
    updateable,
    createable: updateable,
    calculated: field.calculated ?? false,
    custom: field.name.endsWith('__c'),
    nillable: field.type !== 'id' && field.type !== 'boolean',
    filterable: true,
    idLookup: field.type === 'id',
    picklistValues: [],
    referenceTo: field.type === 'reference' ? ['Account'] : [],
  };
}

/** The sObject Describe answer: the object's properties and its fields. */
export function describeObject(schema: ObjectSchema, version: string): Record<string, unknown> {
  const base = `/services/data/v${version}/sobjects/${schema.name}`;
  return {
    name: schema.name,
    label: schema.name,
    labelPlural: `${schema.name}s`,
    keyPrefix: KEY_PREFIX[schema.name],
    custom: false,
    createable: true,
    updateable: true,
    deletable: true,
    queryable: true,
    retrieveable: true,
    fields: [...schema.fields.values()].map(describeField),
    urls: { sobject: base, describe: `${base}/describe`, rowTemplate: `${base}/{ID}` },
  };
}
