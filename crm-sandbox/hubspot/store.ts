/**
 * What the portal holds: records of companies and contacts (every value a string, as HubSpot answers them), the
 * property definitions and groups of each object, and the per-record refusals a test planted.
 */
import { type ErrorDetail, recordError } from './errors.ts';
import {
  defaultGroups,
  defaultProperties,
  type HubspotObject,
  lastModifiedProperty,
  OBJECTS,
  type PropertyDefinition,
  type PropertyGroupDefinition,
} from './schema.ts';
import { checkValue, unknownProperty } from './values.ts';

export interface StoredRecord {
  id: string;
  properties: Map<string, string>;
  createdAt: string;
  updatedAt: string;
  archived: boolean;
  archivedAt?: string;
}

/** A refusal planted for one record: its next updates are answered with this error in a 207. */
export interface RecordRefusal {
  category: string;
  message: string;
  errors?: ErrorDetail[];
}

export type RecordError = ReturnType<typeof recordError>;

interface ObjectStore {
  records: Map<string, StoredRecord>;
  properties: Map<string, PropertyDefinition>;
  groups: Map<string, PropertyGroupDefinition>;
  refusals: Map<string, RecordRefusal>;
}

export class PortalStore {
  private readonly objects = new Map<HubspotObject, ObjectStore>();
  private nextId = 1_000_001;
  private readonly clock: () => number;

  constructor(clock: () => number) {
    this.clock = clock;
    for (const object of OBJECTS) {
      this.objects.set(object, {
        records: new Map(),
        properties: new Map(defaultProperties(object).map((p) => [p.name, p])),
        groups: new Map(defaultGroups(object).map((g) => [g.name, g])),
        refusals: new Map(),
      });
    }
  }

  private of(object: HubspotObject): ObjectStore {
    return this.objects.get(object) as ObjectStore;
  }

  now(): string {
    return new Date(this.clock()).toISOString();
  }

  /** Checks every value against its property; the values to store (null: clear) or the details of what is wrong. */
  checkValues(object: HubspotObject, values: Record<string, unknown>): Map<string, string | null> | ErrorDetail[] {
    const properties = this.of(object).properties;
    const checked = new Map<string, string | null>();
    const errors: ErrorDetail[] = [];
    for (const [name, raw] of Object.entries(values)) {
      const property = properties.get(name);
      const result = property && !property.archived ? checkValue(property, raw) : { error: unknownProperty(name) };
      if ('error' in result) errors.push(result.error);
      else checked.set(name, result.value);
    }
    return errors.length ? errors : checked;
  }

  private apply(object: HubspotObject, record: StoredRecord, values: Map<string, string | null>): void {
    const now = this.now();
    for (const [name, value] of values) {
      if (value === null) record.properties.delete(name);
      else record.properties.set(name, value);
    }
    record.updatedAt = now;
    record.properties.set(lastModifiedProperty(object), now);
  }

  create(object: HubspotObject, values: Map<string, string | null>): StoredRecord {
    const id = String(this.nextId++);
    const now = this.now();
    const record: StoredRecord = { id, properties: new Map(), createdAt: now, updatedAt: now, archived: false };
    record.properties.set('hs_object_id', id);
    record.properties.set('createdate', now);
    this.apply(object, record, values);
    this.of(object).records.set(id, record);
    return record;
  }

  /** An update of one record: the record, or its 207 error (archived or unknown, a planted refusal, a bad value). */
  update(object: HubspotObject, id: string, values: Record<string, unknown>): StoredRecord | RecordError {
    const store = this.of(object);
    const record = store.records.get(id);
    if (record === undefined || record.archived) {
      return recordError('OBJECT_NOT_FOUND', `Object not found. objectId are usually numeric.`, [id]);
    }
    const refusal = store.refusals.get(id);
    if (refusal) return recordError(refusal.category, refusal.message, [id], refusal.errors);
    const checked = this.checkValues(object, values);
    if (Array.isArray(checked)) {
      const detail = JSON.stringify(checked.map((e) => ({ isValid: false, message: e.message, error: e.code })));
      return recordError('VALIDATION_ERROR', `Property values were not valid: ${detail}`, [id], checked);
    }
    this.apply(object, record, checked);
    return record;
  }

  /** A live record (not archived), or undefined. */
  get(object: HubspotObject, id: string): StoredRecord | undefined {
    const record = this.of(object).records.get(id);
    return record && !record.archived ? record : undefined;
  }

  /** Every record, archived ones too: what tests read back. */
  records(object: HubspotObject): StoredRecord[] {
    return [...this.of(object).records.values()];
  }

  archive(object: HubspotObject, id: string): boolean {
    const record = this.of(object).records.get(id);
    if (!record || record.archived) return false;
    record.archived = true;
    record.archivedAt = this.now();
    return true;
  }

  refuse(object: HubspotObject, id: string, refusal: RecordRefusal | undefined): void {
    if (refusal) this.of(object).refusals.set(id, refusal);
    else this.of(object).refusals.delete(id);
  }

  properties(object: HubspotObject): PropertyDefinition[] {
    return [...this.of(object).properties.values()];
  }

  property(object: HubspotObject, name: string): PropertyDefinition | undefined {
    return this.of(object).properties.get(name);
  }

  addProperty(object: HubspotObject, property: PropertyDefinition): void {
    this.of(object).properties.set(property.name, property);
  }

  groups(object: HubspotObject): PropertyGroupDefinition[] {
    return [...this.of(object).groups.values()];
  }

  group(object: HubspotObject, name: string): PropertyGroupDefinition | undefined {
    return this.of(object).groups.get(name);
  }

  addGroup(object: HubspotObject, group: PropertyGroupDefinition): void {
    this.of(object).groups.set(group.name, group);
  }
}
