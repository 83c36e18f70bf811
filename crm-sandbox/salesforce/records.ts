/**
 * The org's records and the rules every update passes, whichever API carries it (sObject Collections, a single
 * sObject PATCH, a Bulk API 2.0 ingest job): the id names a live record of the object, the row is not locked, each
 * field exists, may be updated and takes the value, and the object's validation rules accept the result. Nothing
 * here creates or deletes a record through the API: tests seed records and mark them deleted or locked.
 */
import { type FieldSpec, KEY_PREFIX, type ObjectName, type ObjectSchema } from './fields.ts';
import { IdSequence, normalizeId } from './ids.ts';
import { convertValue, type FieldValue, type RecordError, salesforceDateTime } from './values.ts';

export type StoredRecord = Record<string, FieldValue>;

export interface ValidationRule {
  object: ObjectName;
  /** The error message the rule shows (Salesforce's `message` of FIELD_CUSTOM_VALIDATION_EXCEPTION). */
  message: string;
  /** The field the error is shown on, if any. */
  field?: string;
  /** True when the record, as it would be after the update, breaks the rule. */
  rejects: (record: StoredRecord) => boolean;
}

export type UpdateResult = { id: string; ok: true } | { id: string; ok: false; error: RecordError };

const failure = (id: string, statusCode: string, message: string, fields: string[] = []): UpdateResult => ({
  id,
  ok: false,
  error: { statusCode, message, fields },
});

export class RecordStore {
  private readonly records = new Map<string, StoredRecord>();
  private readonly objectOf = new Map<string, ObjectName>();
  private readonly deleted = new Set<string>();
  /** Id → how many more update attempts find the row locked (Infinity: until unlocked). */
  private readonly locks = new Map<string, number>();
  private readonly rules: ValidationRule[] = [];
  private readonly sequences = new Map<ObjectName, IdSequence>();
  readonly schemas: Map<ObjectName, ObjectSchema>;
  private readonly now: () => number;

  constructor(schemas: Map<ObjectName, ObjectSchema>, now: () => number) {
    this.schemas = schemas;
    this.now = now;
  }

  schema(object: ObjectName): ObjectSchema {
    return this.schemas.get(object) as ObjectSchema;
  }

  /** Adds records as a person would in the UI (values taken as given); returns their 18-character ids. */
  seed(object: ObjectName, values: StoredRecord[]): string[] {
    let sequence = this.sequences.get(object);
    if (!sequence) {
      sequence = new IdSequence(KEY_PREFIX[object]);
      this.sequences.set(object, sequence);
    }
    const stamp = salesforceDateTime(this.now());
    return values.map((v) => {
      const id = (sequence as IdSequence).take();
      this.records.set(id, { ...v, Id: id, CreatedDate: stamp, LastModifiedDate: stamp });
      this.objectOf.set(id, object);
      return id;
    });
  }

  /** A live record (a copy), or undefined when it does not exist or is deleted. */
  get(id: string): StoredRecord | undefined {
    const full = normalizeId(id);
    if (full === undefined || this.deleted.has(full)) return undefined;
    const record = this.records.get(full);
    return record && { ...record };
  }

  /** Sets values directly, as a person editing the record would (no API call counted). */
  edit(id: string, values: StoredRecord): void {
    const full = normalizeId(id) as string;
    const record = this.records.get(full);
    if (!record) throw new Error(`no record ${id}`);
    Object.assign(record, values, { LastModifiedDate: salesforceDateTime(this.now()) });
  }

  markDeleted(id: string): void {
    this.deleted.add(normalizeId(id) as string);
  }

  lock(id: string, attempts = Number.POSITIVE_INFINITY): void {
    this.locks.set(normalizeId(id) as string, attempts);
  }

  unlock(id: string): void {
    this.locks.delete(normalizeId(id) as string);
  }

  addValidationRule(rule: ValidationRule): void {
    this.rules.push(rule);
  }

  /** Field names of `values` the object does not have (an unknown field fails the whole request or job). */
  unknownFields(object: ObjectName, names: string[]): string[] {
    const schema = this.schema(object);
    return names.filter((n) => !schema.byLowerName.has(n.toLowerCase()));
  }

  /** Checks and applies one record's update; `values` holds only the fields to change. */
  update(object: ObjectName, rawId: string, values: Record<string, unknown>): UpdateResult {
    const found = this.live(object, rawId);
    if (!found.ok) return found;
    const { id } = found;
    const changes = this.typedChanges(object, id, values);
    if ('error' in changes) return changes;
    const next = { ...(this.records.get(id) as StoredRecord), ...changes.values };
    const broken = this.rules.find((rule) => rule.object === object && rule.rejects(next));
    if (broken)
      return failure(id, 'FIELD_CUSTOM_VALIDATION_EXCEPTION', broken.message, broken.field ? [broken.field] : []);
    this.records.set(id, { ...next, LastModifiedDate: salesforceDateTime(this.now()) });
    return { id, ok: true };
  }

  private live(object: ObjectName, rawId: string): UpdateResult {
    const id = normalizeId(rawId);
    if (id === undefined || !id.startsWith(KEY_PREFIX[object])) {
      return failure(rawId, 'MALFORMED_ID', `${object} ID: id value of incorrect type: ${rawId}`, ['Id']);
    }
    if (this.deleted.has(id)) return failure(id, 'ENTITY_IS_DELETED', 'entity is deleted');
    if (!this.records.has(id) || this.objectOf.get(id) !== object) {
      return failure(id, 'INVALID_CROSS_REFERENCE_KEY', 'invalid cross reference id');
    }
    const lock = this.locks.get(id);
    if (lock !== undefined && lock > 0) {
      this.locks.set(id, lock - 1);
      return failure(id, 'UNABLE_TO_LOCK_ROW', `unable to obtain exclusive access to this record or 1 records: ${id}`);
    }
    return { id, ok: true };
  }

  private typedChanges(
    object: ObjectName,
    id: string,
    values: Record<string, unknown>,
  ): { values: StoredRecord } | { id: string; ok: false; error: RecordError } {
    const schema = this.schema(object);
    const out: StoredRecord = {};
    const readOnly: string[] = [];
    for (const [name, value] of Object.entries(values)) {
      const field = schema.byLowerName.get(name.toLowerCase()) as FieldSpec;
      if (field.updateable === false) {
        readOnly.push(field.name);
        continue;
      }
      const converted = convertValue(field, value);
      if (!converted.ok) return { id, ok: false, error: converted.error };
      out[field.name] = converted.value;
    }
    if (readOnly.length > 0) {
      const message = `Unable to create/update fields: ${readOnly.join(', ')}. Please check the security settings of this field and verify that it is read/write for your profile or permission set.`;
      return { id, ok: false, error: { statusCode: 'INVALID_FIELD_FOR_INSERT_UPDATE', message, fields: readOnly } };
    }
    return { values: out };
  }
}
