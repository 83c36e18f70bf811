/**
 * The REST resources: sObject Describe, sObject Collections update (`PATCH /composite/sobjects`, at most 200
 * records, `allOrNone`, one SaveResult `{id, success, errors: [{statusCode, message, fields}]}` per record in order)
 * and retrieve (`POST /composite/sobjects/{object}` with `{ids, fields}`), a single record's GET and PATCH, and
 * `/limits`.
 */
import { z } from 'zod';
import { describeObject, KEY_PREFIX, OBJECTS, type ObjectName } from './fields.ts';
import { ApiFault, notFound, parseJson, type Reply, type Request } from './http.ts';
import { normalizeId } from './ids.ts';
import type { RecordStore, StoredRecord, UpdateResult } from './records.ts';

export const MAX_COLLECTION_RECORDS = 200;
export const MAX_RETRIEVE_IDS = 2000;

export function objectNamed(name: string | undefined): ObjectName {
  const found = OBJECTS.find((o) => o.toLowerCase() === name?.toLowerCase());
  if (!found) throw notFound();
  return found;
}

const collectionBody = z.object({
  allOrNone: z.boolean().optional(),
  records: z.array(z.record(z.string(), z.unknown())),
});

const retrieveBody = z.object({ ids: z.array(z.string()), fields: z.array(z.string()).min(1) });

function checkFields(store: RecordStore, object: ObjectName, names: string[]): void {
  const unknown = store.unknownFields(object, names);
  if (unknown.length > 0) {
    throw new ApiFault(400, 'INVALID_FIELD', `No such column '${unknown[0]}' on sobject of type ${object}`);
  }
}

function saveResult(result: UpdateResult): Record<string, unknown> {
  return result.ok
    ? { id: result.id, success: true, errors: [] }
    : { success: false, errors: [result.error], ...(result.id ? { id: result.id } : {}) };
}

function splitRecord(raw: Record<string, unknown>): { object: string; id: unknown; values: Record<string, unknown> } {
  const { attributes, id, Id, ...values } = raw as { attributes?: { type?: string }; id?: unknown; Id?: unknown };
  return { object: attributes?.type ?? '', id: id ?? Id, values };
}

/** `PATCH /composite/sobjects`. */
export function updateCollection(store: RecordStore, req: Request): Reply {
  const parsed = collectionBody.safeParse(parseJson(req.body));
  if (!parsed.success) throw new ApiFault(400, 'INVALID_FIELD', 'records: a list of records is required');
  const { records, allOrNone = false } = parsed.data;
  if (records.length > MAX_COLLECTION_RECORDS) {
    throw new ApiFault(
      400,
      'EXCEEDED_ID_LIMIT',
      'record limit reached. cannot submit more than 200 records into this call',
    );
  }
  const split = records.map(splitRecord);
  for (const r of split) checkFields(store, objectNamed(r.object), Object.keys(r.values));
  const before = split.map((r) => (typeof r.id === 'string' ? store.get(r.id) : undefined));
  const results = split.map((r): UpdateResult => {
    if (typeof r.id !== 'string' || r.id === '') {
      return {
        id: '',
        ok: false,
        error: { statusCode: 'MISSING_ARGUMENT', message: 'Id not specified in an update call', fields: [] },
      };
    }
    return store.update(objectNamed(r.object), r.id, r.values);
  });
  if (allOrNone && results.some((r) => !r.ok)) {
    for (const record of before) if (record) store.edit(record['Id'] as string, record);
    const rolledBack = (r: UpdateResult): UpdateResult =>
      r.ok
        ? {
            id: r.id,
            ok: false,
            error: {
              statusCode: 'ALL_OR_NONE_OPERATION_ROLLED_BACK',
              message:
                'Record rolled back because not all records were valid and the request was using AllOrNone header',
              fields: [],
            },
          }
        : r;
    return { status: 200, body: results.map(rolledBack).map(saveResult) };
  }
  return { status: 200, body: results.map(saveResult) };
}

function recordView(record: StoredRecord, object: ObjectName, fields: string[], req: Request): Record<string, unknown> {
  const out: Record<string, unknown> = {
    attributes: { type: object, url: `/services/data/v${req.version}/sobjects/${object}/${record['Id']}` },
  };
  for (const name of fields) {
    const proper = [...Object.keys(record), name].find((k) => k.toLowerCase() === name.toLowerCase()) as string;
    out[proper] = record[proper] ?? null;
  }
  return out;
}

function liveRecord(store: RecordStore, object: ObjectName, id: string): StoredRecord | undefined {
  const full = normalizeId(id);
  return full?.startsWith(KEY_PREFIX[object]) ? store.get(full) : undefined;
}

/** `POST /composite/sobjects/{object}`: the records in the order of `ids`, `null` for an id with no live record. */
export function retrieveCollection(store: RecordStore, req: Request): Reply {
  const object = objectNamed(req.segments[2]);
  const parsed = retrieveBody.safeParse(parseJson(req.body));
  if (!parsed.success) throw new ApiFault(400, 'INVALID_FIELD', 'ids and fields are required');
  if (parsed.data.ids.length > MAX_RETRIEVE_IDS) {
    throw new ApiFault(
      400,
      'EXCEEDED_ID_LIMIT',
      'record limit reached. cannot submit more than 2000 records into this call',
    );
  }
  checkFields(store, object, parsed.data.fields);
  const fields = ['Id', ...parsed.data.fields.filter((f) => f.toLowerCase() !== 'id')];
  const body = parsed.data.ids.map((id) => {
    const record = liveRecord(store, object, id);
    return record ? recordView(record, object, fields, req) : null;
  });
  return { status: 200, body };
}

/** `GET /sobjects/{object}/{id}` and `PATCH /sobjects/{object}/{id}` (204, or the error list). */
export function singleRecord(store: RecordStore, req: Request): Reply {
  const object = objectNamed(req.segments[1]);
  const id = req.segments[2] as string;
  if (req.method === 'PATCH') {
    const values = parseJson(req.body) as Record<string, unknown>;
    checkFields(store, object, Object.keys(values));
    const result = store.update(object, id, values);
    if (result.ok) return { status: 204 };
    const status = result.error.statusCode === 'ENTITY_IS_DELETED' ? 404 : 400;
    throw new ApiFault(status, result.error.statusCode, result.error.message, result.error.fields);
  }
  const record = liveRecord(store, object, id);
  if (!record) throw notFound();
  const asked = req.query.get('fields')?.split(',').filter(Boolean);
  const fields = asked ?? [...store.schema(object).fields.keys()];
  checkFields(store, object, fields);
  return { status: 200, body: recordView(record, object, ['Id', ...fields.filter((f) => f !== 'Id')], req) };
}

export function describe(store: RecordStore, req: Request): Reply {
  return { status: 200, body: describeObject(store.schema(objectNamed(req.segments[1])), req.version) };
}
