/**
 * HubSpot's properties as the kit sees them (`describe`), and the kit's own properties created in a property group
 * of the kit's (`signal-kit crm fields --create hubspot`), both through the properties API.
 */
import type { CrmFieldInfo, CrmFieldType, CrmObject } from '../writer.ts';
import { type HubspotApis, hubspotError } from './client.ts';
import type { HubspotPacer } from './pacing.ts';

export type HubspotObject = 'companies' | 'contacts';

/** The longest value a HubSpot string property takes. */
export const HUBSPOT_TEXT_LENGTH = 65_536;

/** The property group the kit's properties are created in. */
export const KIT_GROUP = { name: 'signal_kit', label: 'Signal Kit' } as const;

const KIT_TYPES: Record<string, CrmFieldType> = {
  string: 'string',
  phone_number: 'string',
  number: 'number',
  date: 'date',
  datetime: 'datetime',
  bool: 'boolean',
};

export function isHubspotObject(object: CrmObject): object is HubspotObject {
  return object === 'companies' || object === 'contacts';
}

interface PropertyLike {
  name: string;
  label: string;
  type: string;
  calculated?: boolean;
  modificationMetadata?: { readOnlyValue: boolean };
}

/** One property as the kit writes it: enumerations are `other` (only their options are taken). */
export function fieldInfo(property: PropertyLike): CrmFieldInfo {
  const type = KIT_TYPES[property.type] ?? 'other';
  return {
    name: property.name,
    label: property.label,
    type,
    crmType: property.type,
    ...(type === 'string' ? { length: HUBSPOT_TEXT_LENGTH } : {}),
    updateable: property.modificationMetadata?.readOnlyValue !== true && property.calculated !== true,
  };
}

export async function describeProperties(apis: HubspotApis, pacer: HubspotPacer, object: HubspotObject) {
  try {
    const answer = await pacer.send(() => apis.properties.getAllWithHttpInfo(object, false));
    return answer.data.results.map(fieldInfo);
  } catch (error) {
    throw hubspotError(error, `reading the ${object} properties`);
  }
}

/** A kit field to create: its internal name (`signal_count`), label and type. */
export interface KitProperty {
  name: string;
  label: string;
  type: Exclude<CrmFieldType, 'other'>;
}

export type KitPropertyOutcome =
  | { name: string; outcome: 'created' | 'exists' }
  | { name: string; outcome: 'mistyped'; crmType: string };

const CREATE: Record<KitProperty['type'], { type: string; fieldType: string }> = {
  string: { type: 'string', fieldType: 'text' },
  number: { type: 'number', fieldType: 'number' },
  date: { type: 'date', fieldType: 'date' },
  datetime: { type: 'datetime', fieldType: 'date' },
  boolean: { type: 'bool', fieldType: 'booleancheckbox' },
};

function status(error: unknown): number | undefined {
  const code = (error as { code?: unknown })?.code;
  return typeof code === 'number' ? code : undefined;
}

async function ensureGroup(apis: HubspotApis, pacer: HubspotPacer, object: HubspotObject): Promise<void> {
  try {
    await pacer.send(() => apis.groups.createWithHttpInfo(object, { ...KIT_GROUP }));
  } catch (error) {
    if (status(error) !== 409) throw hubspotError(error, `creating the ${KIT_GROUP.name} property group`);
  }
}

/**
 * Creates each kit property missing from `object` in the kit's property group (made first if absent). A property
 * already there is left as it is: `exists` when its type is the kit's, `mistyped` when not (a person must look).
 */
export async function createKitProperties(
  apis: HubspotApis,
  pacer: HubspotPacer,
  object: HubspotObject,
  properties: readonly KitProperty[],
): Promise<KitPropertyOutcome[]> {
  const existing = new Map((await describeProperties(apis, pacer, object)).map((f) => [f.name, f]));
  if (properties.some((p) => !existing.has(p.name))) await ensureGroup(apis, pacer, object);
  const outcomes: KitPropertyOutcome[] = [];
  for (const property of properties) {
    const found = existing.get(property.name);
    if (found) {
      outcomes.push(
        found.type === property.type
          ? { name: property.name, outcome: 'exists' }
          : { name: property.name, outcome: 'mistyped', crmType: found.crmType },
      );
      continue;
    }
    const { type, fieldType } = CREATE[property.type];
    const options =
      property.type === 'boolean'
        ? [
            { label: 'Yes', value: 'true', displayOrder: 0, hidden: false },
            { label: 'No', value: 'false', displayOrder: 1, hidden: false },
          ]
        : [];
    try {
      await pacer.send(() =>
        apis.properties.createWithHttpInfo(object, {
          name: property.name,
          label: property.label,
          type,
          fieldType,
          groupName: KIT_GROUP.name,
          options,
        } as never),
      );
      outcomes.push({ name: property.name, outcome: 'created' });
    } catch (error) {
      if (status(error) !== 409) throw hubspotError(error, `creating the ${object} property ${property.name}`);
      outcomes.push({ name: property.name, outcome: 'exists' });
    }
  }
  return outcomes;
}
