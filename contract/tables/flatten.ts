import type { Column, TableDef, TableRow, ValuePath } from './columns.ts';
import { columnValue, isObject } from './values.ts';

/**
 * Turns what a row is made from (a line, or a signal) into a table row, column by column as the table's list says
 * (`Column.from`). Every row of a table has the same keys in the same order (a copy of one template), which keeps
 * them fast to fill and to read by name in the encoders.
 */
export type Flatten = (source: unknown, derived?: unknown) => TableRow;

const compiled = new WeakMap<TableDef, Flatten>();

export function flattener(def: TableDef): Flatten {
  let flatten = compiled.get(def);
  if (flatten === undefined) {
    flatten = compile(def);
    compiled.set(def, flatten);
  }
  return flatten;
}

/** The columns filled from fields of a `rest:` column's object: field → its column, or the columns of a sub-object. */
type Taken = Map<string, Column | Taken>;

function compile(def: TableDef): Flatten {
  // Built at once (an object filled key by key turns slow past a few dozen keys, and so would every copy of it).
  const template: TableRow = Object.fromEntries(def.columns.map((column) => [column.name, null]));
  const rests = def.columns.filter((column) => column.from?.rest === true);
  const takenBy = new Set<Column>();
  const rest = rests.map((column) => {
    const taken = takenFrom(def.columns, column.from as ValuePath, takenBy);
    return { column, path: column.from as ValuePath, taken };
  });
  const plain = def.columns.filter(
    (column) => column.from !== undefined && !rests.includes(column) && !takenBy.has(column),
  );
  return (source, derived) => {
    const row: TableRow = { ...template };
    for (const column of plain) {
      const path = column.from as ValuePath;
      row[column.name] = columnValue(column.type, column.nullable, valueAt(path.derived ? derived : source, path.keys));
    }
    for (const { column, path, taken } of rest) {
      const value = valueAt(path.derived ? derived : source, path.keys);
      row[column.name] = isObject(value) ? (split(value, taken, row) ?? {}) : (value ?? {});
    }
    return row;
  };
}

/** The columns whose path runs through the rest column's object, as a tree of its fields. */
function takenFrom(columns: readonly Column[], restPath: ValuePath, takenBy: Set<Column>): Taken {
  const taken: Taken = new Map();
  for (const column of columns) {
    const path = column.from;
    if (path === undefined || path.rest || path.derived !== restPath.derived) continue;
    if (path.keys.length <= restPath.keys.length || restPath.keys.some((key, i) => path.keys[i] !== key)) continue;
    let node = taken;
    const fields = path.keys.slice(restPath.keys.length);
    for (const field of fields.slice(0, -1)) {
      let inner = node.get(field);
      if (!(inner instanceof Map)) {
        inner = new Map();
        node.set(field, inner);
      }
      node = inner;
    }
    node.set(fields.at(-1) as string, column);
    takenBy.add(column);
  }
  return taken;
}

/**
 * One pass over an object: each field with a column goes to it when it has the column's type, else stays in what
 * is returned (an explicit null included: nothing is lost); undefined when nothing is left. A sub-object that is
 * empty stays as it was; one whose fields all have columns is not repeated. No `delete`: it would slow the objects.
 */
function split(object: Record<string, unknown>, taken: Taken, row: TableRow): Record<string, unknown> | undefined {
  let left: Record<string, unknown> | undefined;
  for (const field in object) {
    const value = object[field];
    const target = taken.get(field);
    if (target !== undefined && !(target instanceof Map)) {
      const typed = columnValue(target.type, true, value);
      if (typed !== null) {
        row[target.name] = typed;
        continue;
      }
    } else if (target !== undefined && isObject(value)) {
      const inner = split(value, target, row);
      if (inner !== undefined || Object.keys(value).length === 0) {
        left ??= {};
        left[field] = inner ?? value;
      }
      continue;
    }
    left ??= {};
    left[field] = value;
  }
  return left;
}

function valueAt(root: unknown, keys: readonly string[]): unknown {
  let value = root;
  for (const key of keys) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}
