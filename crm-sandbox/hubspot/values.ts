/**
 * A property value as HubSpot takes it in a create or update: every value is stored as a string; numbers as their
 * decimal form, dates as `YYYY-MM-DD` (or midnight UTC in epoch milliseconds), datetimes as ISO 8601 or epoch
 * milliseconds, booleans as `true`/`false`, enumerations among their options. An empty string or null clears it.
 */
import type { ErrorDetail } from './errors.ts';
import type { PropertyDefinition } from './schema.ts';

/** The longest text a string property takes. */
export const MAX_STRING_LENGTH = 65_536;

export type Checked = { value: string | null } | { error: ErrorDetail };

function invalid(property: PropertyDefinition, raw: unknown, code: string, what: string): Checked {
  return {
    error: {
      message: `${JSON.stringify(raw)} was not a valid ${what}.`,
      code,
      context: { propertyName: [property.name] },
    },
  };
}

function asNumber(property: PropertyDefinition, raw: unknown): Checked {
  const n = typeof raw === 'number' ? raw : typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : Number.NaN;
  return Number.isFinite(n) ? { value: String(n) } : invalid(property, raw, 'INVALID_INTEGER', 'number');
}

function asDate(property: PropertyDefinition, raw: unknown): Checked {
  const text = String(raw);
  if (/^\d{4}-\d{2}-\d{2}$/.test(text) && !Number.isNaN(Date.parse(`${text}T00:00:00Z`))) return { value: text };
  if (/^\d+$/.test(text) && Number(text) % 86_400_000 === 0) {
    return { value: new Date(Number(text)).toISOString().slice(0, 10) };
  }
  return invalid(property, raw, 'INVALID_DATE', 'date (YYYY-MM-DD or midnight UTC in milliseconds)');
}

function asDatetime(property: PropertyDefinition, raw: unknown): Checked {
  const text = String(raw);
  const ms = /^\d+$/.test(text) ? Number(text) : /^\d{4}-\d{2}-\d{2}T/.test(text) ? Date.parse(text) : Number.NaN;
  return Number.isFinite(ms)
    ? { value: new Date(ms).toISOString() }
    : invalid(property, raw, 'INVALID_DATETIME', 'datetime');
}

function asBool(property: PropertyDefinition, raw: unknown): Checked {
  const text = String(raw).toLowerCase();
  return text === 'true' || text === 'false' ? { value: text } : invalid(property, raw, 'INVALID_BOOLEAN', 'boolean');
}

function asOption(property: PropertyDefinition, raw: unknown): Checked {
  const values = new Set(property.options.map((o) => o.value));
  const chosen = String(raw).split(';');
  return chosen.every((v) => values.has(v))
    ? { value: String(raw) }
    : invalid(property, raw, 'INVALID_OPTION', `option of ${property.name}`);
}

function asString(property: PropertyDefinition, raw: unknown): Checked {
  if (typeof raw === 'object') return invalid(property, raw, 'INVALID_STRING', 'string');
  const text = String(raw);
  if (text.length > MAX_STRING_LENGTH) {
    return {
      error: {
        message: `Property value for ${property.name} is ${text.length} characters long; the limit is ${MAX_STRING_LENGTH}.`,
        code: 'INVALID_STRING_LENGTH',
        context: { propertyName: [property.name] },
      },
    };
  }
  return { value: text };
}

const BY_TYPE = {
  number: asNumber,
  date: asDate,
  datetime: asDatetime,
  bool: asBool,
  enumeration: asOption,
  string: asString,
} as const;

export function checkValue(property: PropertyDefinition, raw: unknown): Checked {
  if (raw === null || raw === '') return { value: null };
  if (property.modificationMetadata.readOnlyValue) {
    return {
      error: {
        message: `${property.name} is a read only property; its value cannot be set.`,
        code: 'READ_ONLY_VALUE',
        context: { propertyName: [property.name] },
      },
    };
  }
  return BY_TYPE[property.type](property, raw);
}

export function unknownProperty(name: string): ErrorDetail {
  return {
    message: `Property "${name}" does not exist`,
    code: 'PROPERTY_DOESNT_EXIST',
    context: { propertyName: [name] },
  };
}
