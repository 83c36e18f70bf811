/**
 * The objects API: `/crm/v3/objects/{companies|contacts}/batch/read|create|update` (100 inputs at most a call;
 * 200, 201, or 207 with one error per refused record) and `GET /crm/v3/objects/{object}/{id}`.
 */
import { z } from 'zod';
import { type ErrorDetail, notFound, recordError, validationError } from './errors.ts';
import type { Route } from './routes.ts';
import { type HubspotObject, lastModifiedProperty, objectLabel } from './schema.ts';
import type { PortalStore, RecordError, StoredRecord } from './store.ts';

export const MAX_BATCH_INPUTS = 100;

const value = z.union([z.string(), z.number(), z.boolean(), z.null()]);
const readBody = z.object({
  inputs: z.array(z.object({ id: z.string() })),
  properties: z.array(z.string()).optional(),
  propertiesWithHistory: z.array(z.string()).optional(),
  idProperty: z.string().optional(),
});
const createBody = z.object({
  inputs: z.array(z.object({ properties: z.record(z.string(), value), associations: z.array(z.unknown()).optional() })),
});
const updateBody = z.object({
  inputs: z.array(
    z.object({ id: z.string(), properties: z.record(z.string(), value), idProperty: z.string().optional() }),
  ),
});

export function parseBody<T>(schema: z.ZodType<T>, body: unknown): T {
  const parsed = schema.safeParse(body);
  if (parsed.success) return parsed.data;
  const errors: ErrorDetail[] = parsed.error.issues.map((issue) => ({
    message: `${issue.path.join('.') || 'body'}: ${issue.message}`,
    code: 'INVALID_INPUT',
  }));
  throw validationError(`Invalid input JSON: ${errors.map((e) => e.message).join('; ')}`, errors);
}

function checkCount(count: number): void {
  if (count > MAX_BATCH_INPUTS) {
    throw validationError(`Batch input exceeds the limit of ${MAX_BATCH_INPUTS} inputs: got ${count}.`, [
      { message: `inputs may hold at most ${MAX_BATCH_INPUTS} entries`, code: 'TOO_MANY_INPUTS' },
    ]);
  }
}

/** A record as HubSpot answers it: the asked properties (null when empty) and the ones it always sends. */
export function publicObject(object: HubspotObject, record: StoredRecord, asked?: string[]) {
  const names = new Set([...(asked ?? [...record.properties.keys()]), 'hs_object_id', 'createdate']);
  names.add(lastModifiedProperty(object));
  const properties: Record<string, string | null> = {};
  for (const name of names) properties[name] = record.properties.get(name) ?? null;
  return {
    id: record.id,
    properties,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
    archived: record.archived,
    ...(record.archivedAt ? { archivedAt: record.archivedAt } : {}),
  };
}

function batchAnswer(store: PortalStore, okStatus: number, results: unknown[], errors: RecordError[], started: string) {
  const body = { status: 'COMPLETE', results, startedAt: started, completedAt: store.now() };
  if (!errors.length) return { status: okStatus, body };
  return { status: 207, body: { ...body, numErrors: errors.length, errors } };
}

function batchRead(store: PortalStore, object: HubspotObject, raw: unknown) {
  const started = store.now();
  const body = parseBody(readBody, raw);
  checkCount(body.inputs.length);
  const ids = [...new Set(body.inputs.map((i) => i.id))];
  const found = ids.map((id) => store.get(object, id)).filter((r): r is StoredRecord => r !== undefined);
  const missing = ids.filter((id) => !store.get(object, id));
  const errors = missing.length
    ? [
        recordError(
          'OBJECT_NOT_FOUND',
          `Could not get some ${objectLabel(object)} objects, they may be deleted or not exist. Check that ids are valid.`,
          missing,
        ),
      ]
    : [];
  const results = found.map((r) => publicObject(object, r, body.properties ?? []));
  return batchAnswer(store, 200, results, errors, started);
}

function batchCreate(store: PortalStore, object: HubspotObject, raw: unknown) {
  const started = store.now();
  const body = parseBody(createBody, raw);
  checkCount(body.inputs.length);
  const checked = body.inputs.map((input) => store.checkValues(object, input.properties));
  const errors = checked.flatMap((c) => (Array.isArray(c) ? c : []));
  if (errors.length) throw validationError(`Property values were not valid: ${JSON.stringify(errors)}`, errors);
  const results = checked.map((c) => publicObject(object, store.create(object, c as Map<string, string | null>)));
  return batchAnswer(store, 201, results, [], started);
}

/** Whether a value HubSpot refuses fails its record alone (a 207) or the whole batch (a 400, nothing written). */
export type BatchValidation = 'per-record' | 'whole-batch';

function refuseWholeBatch(
  store: PortalStore,
  object: HubspotObject,
  inputs: { properties: Record<string, unknown> }[],
) {
  const errors = inputs.flatMap((input) => {
    const checked = store.checkValues(object, input.properties);
    return Array.isArray(checked) ? checked : [];
  });
  if (errors.length) throw validationError(`Property values were not valid: ${JSON.stringify(errors)}`, errors);
}

function batchUpdate(store: PortalStore, object: HubspotObject, raw: unknown, validation: BatchValidation) {
  const started = store.now();
  const body = parseBody(updateBody, raw);
  checkCount(body.inputs.length);
  if (validation === 'whole-batch') refuseWholeBatch(store, object, body.inputs);
  const seen = new Set<string>();
  const duplicates = body.inputs.filter((i) => seen.has(i.id) || !seen.add(i.id)).map((i) => i.id);
  if (duplicates.length) throw validationError(`Duplicate IDs found in batch input: ${JSON.stringify(duplicates)}`);
  const results: unknown[] = [];
  const errors: RecordError[] = [];
  for (const input of body.inputs) {
    const outcome = store.update(object, input.id, input.properties);
    if ('category' in outcome) errors.push(outcome);
    else results.push(publicObject(object, outcome, Object.keys(input.properties)));
  }
  return batchAnswer(store, 200, results, errors, started);
}

const oneUpdate = z.object({ properties: z.record(z.string(), value) });

/** `PATCH /crm/v3/objects/{object}/{id}` (the client's `basicApi.update`): what a person's edit in HubSpot does. */
function updateOne(store: PortalStore, object: HubspotObject, id: string, raw: unknown) {
  const body = parseBody(oneUpdate, raw);
  const outcome = store.update(object, id, body.properties);
  if (!('category' in outcome))
    return { status: 200, body: publicObject(object, outcome, Object.keys(body.properties)) };
  if (outcome.category === 'OBJECT_NOT_FOUND') throw notFound(outcome.message);
  throw validationError(outcome.message, outcome.errors);
}

function getOne(store: PortalStore, object: HubspotObject, id: string, query: URLSearchParams) {
  const record = store.get(object, id);
  if (!record) throw notFound(`Object not found. objectId are usually numeric.`);
  // The client repeats the parameter (`properties=a&properties=b`); HubSpot takes commas too.
  const asked = query
    .getAll('properties')
    .flatMap((p) => p.split(','))
    .filter(Boolean);
  return { status: 200, body: publicObject(object, record, asked) };
}

export function objectRoutes(store: PortalStore, validation: BatchValidation): Route[] {
  const read = (o: HubspotObject) => [`crm.objects.${o}.read`, `crm.objects.${o}.write`];
  const write = (o: HubspotObject) => [`crm.objects.${o}.write`];
  return [
    {
      method: 'POST',
      path: '/crm/v3/objects/:object/batch/read',
      scopes: read,
      handle: (r) => batchRead(store, r.object, r.body),
    },
    {
      method: 'POST',
      path: '/crm/v3/objects/:object/batch/create',
      scopes: write,
      handle: (r) => batchCreate(store, r.object, r.body),
    },
    {
      method: 'POST',
      path: '/crm/v3/objects/:object/batch/update',
      scopes: write,
      handle: (r) => batchUpdate(store, r.object, r.body, validation),
    },
    {
      method: 'GET',
      path: '/crm/v3/objects/:object/:id',
      scopes: read,
      handle: (r) => getOne(store, r.object, r.params['id'] as string, r.query),
    },
    {
      method: 'PATCH',
      path: '/crm/v3/objects/:object/:id',
      scopes: write,
      handle: (r) => updateOne(store, r.object, r.params['id'] as string, r.body),
    },
  ];
}
