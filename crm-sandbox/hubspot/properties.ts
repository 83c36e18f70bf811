/**
 * The properties API: `/crm/v3/properties/{object}` (list, read one, create) and its property groups
 * (`/crm/v3/properties/{object}/groups`: list, read one, create). A name taken is 409, an unknown one 404.
 */
import { z } from 'zod';
import { conflict, notFound, validationError } from './errors.ts';
import { parseBody } from './objects.ts';
import type { Route } from './routes.ts';
import { type HubspotObject, PROPERTY_TYPES, type PropertyDefinition, type PropertyType } from './schema.ts';
import type { PortalStore } from './store.ts';

const NAME = /^[a-z][a-z0-9_]*$/;

const propertyCreate = z.object({
  name: z.string().regex(NAME, 'must start with a lower-case letter and hold only a-z, 0-9 and _'),
  label: z.string().min(1),
  type: z.enum(PROPERTY_TYPES as [PropertyType, ...PropertyType[]]),
  fieldType: z.string().min(1),
  groupName: z.string().min(1),
  description: z.string().optional(),
  displayOrder: z.number().int().optional(),
  hasUniqueValue: z.boolean().optional(),
  hidden: z.boolean().optional(),
  formField: z.boolean().optional(),
  options: z
    .array(
      z.object({
        label: z.string(),
        value: z.string(),
        displayOrder: z.number().optional(),
        hidden: z.boolean().optional(),
        description: z.string().optional(),
      }),
    )
    .optional(),
});

const groupCreate = z.object({
  name: z.string().regex(NAME, 'must start with a lower-case letter and hold only a-z, 0-9 and _'),
  label: z.string().min(1),
  displayOrder: z.number().int().optional(),
});

function createProperty(store: PortalStore, object: HubspotObject, raw: unknown) {
  const input = parseBody(propertyCreate, raw);
  if (store.property(object, input.name)) throw conflict(`Property named '${input.name}' already exists.`);
  if (!store.group(object, input.groupName)) {
    throw validationError(`Property group '${input.groupName}' does not exist for object type ${object}.`);
  }
  if (input.type === 'enumeration' && !input.options?.length) {
    throw validationError(`Enumeration property '${input.name}' needs options.`);
  }
  const now = store.now();
  const property: PropertyDefinition = {
    name: input.name,
    label: input.label,
    type: input.type,
    fieldType: input.fieldType,
    groupName: input.groupName,
    description: input.description ?? '',
    options: (input.options ?? []).map((o, i) => ({
      label: o.label,
      value: o.value,
      displayOrder: o.displayOrder ?? i,
      hidden: o.hidden ?? false,
    })),
    displayOrder: input.displayOrder ?? -1,
    calculated: false,
    externalOptions: false,
    hasUniqueValue: input.hasUniqueValue ?? false,
    hidden: input.hidden ?? false,
    hubspotDefined: false,
    formField: input.formField ?? false,
    modificationMetadata: { archivable: true, readOnlyDefinition: false, readOnlyValue: false },
    createdAt: now,
    updatedAt: now,
    archived: false,
  };
  store.addProperty(object, property);
  return { status: 201, body: property };
}

function createGroup(store: PortalStore, object: HubspotObject, raw: unknown) {
  const input = parseBody(groupCreate, raw);
  if (store.group(object, input.name)) throw conflict(`Property group named '${input.name}' already exists.`);
  const group = { name: input.name, label: input.label, displayOrder: input.displayOrder ?? -1, archived: false };
  store.addGroup(object, group);
  return { status: 201, body: group };
}

export function propertyRoutes(store: PortalStore): Route[] {
  const read = (o: HubspotObject) => [`crm.schemas.${o}.read`, `crm.schemas.${o}.write`];
  const write = (o: HubspotObject) => [`crm.schemas.${o}.write`];
  return [
    {
      method: 'GET',
      path: '/crm/v3/properties/:object/groups',
      scopes: read,
      handle: (r) => ({ status: 200, body: { results: store.groups(r.object) } }),
    },
    {
      method: 'GET',
      path: '/crm/v3/properties/:object/groups/:name',
      scopes: read,
      handle: (r) => {
        const group = store.group(r.object, r.params['name'] as string);
        if (!group) throw notFound(`Unable to find property group ${r.params['name']}`);
        return { status: 200, body: group };
      },
    },
    {
      method: 'POST',
      path: '/crm/v3/properties/:object/groups',
      scopes: write,
      handle: (r) => createGroup(store, r.object, r.body),
    },
    {
      method: 'GET',
      path: '/crm/v3/properties/:object',
      scopes: read,
      handle: (r) => {
        const archived = r.query.get('archived') === 'true';
        return { status: 200, body: { results: store.properties(r.object).filter((p) => p.archived === archived) } };
      },
    },
    {
      method: 'GET',
      path: '/crm/v3/properties/:object/:name',
      scopes: read,
      handle: (r) => {
        const property = store.property(r.object, r.params['name'] as string);
        if (!property) throw notFound(`Unable to find property ${r.params['name']}`);
        return { status: 200, body: property };
      },
    },
    {
      method: 'POST',
      path: '/crm/v3/properties/:object',
      scopes: write,
      handle: (r) => createProperty(store, r.object, r.body),
    },
  ];
}
