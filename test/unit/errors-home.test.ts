/**
 * Every failure type of the kit lives in connectors/errors.ts with its retry rule: each error class declared anywhere
 * in the product (a class whose chain of `extends` reaches `Error`) is declared there, and every error class there is
 * a `KitError`, whose rule (retryable or not, in Temporal's terms, and fatal or not) the worker's interceptor turns
 * into the failure Temporal acts on. Outside the product: the sandbox and the CRM stand-ins (independent services), the dev stack, the
 * test harness, tests, benchmarks and scripts keep their own.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import * as errors from '../../connectors/errors.ts';
import { repoRoot } from '../../devstack/binaries.ts';

const root = repoRoot();
const HOME = 'connectors/errors.ts';
const NOT_THE_KIT = ['sandbox/', 'crm-sandbox/', 'devstack/', 'testkit/', 'test/', 'bench/', 'scripts/'];
const SKIP = new Set(['node_modules', 'dist', 'out', '.tools', '.git', 'results', 'fixtures']);
const BUILT_IN = ['Error', 'TypeError', 'RangeError', 'SyntaxError', 'AggregateError'];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (SKIP.has(entry.name)) return [];
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [relative(root, path)] : [];
  });
}

interface Declared {
  file: string;
  name: string;
  /** The class it extends, by name (a factory's call, `kitErrorWithRule(...)`, by the class it returns). */
  base: string;
}

/** The class factories of connectors/errors.ts, by the class each returns a subclass of. */
const FACTORIES: Record<string, string> = { apiErrorWithRule: 'SignalApiError', kitErrorWithRule: 'KitError' };

const CLASS = /^\s*(?:export\s+)?(?:abstract\s+)?class\s+(\w+)(?:<[^>{]*>)?\s+extends\s+([\w.]+)(\()?/gm;

function declaredClasses(): Declared[] {
  return sourceFiles(root).flatMap((file) =>
    [...readFileSync(join(root, file), 'utf8').matchAll(CLASS)].map((m) => ({
      file,
      name: m[1] as string,
      // A call of an unknown factory stays unresolved, and the test of the factories below fails on it.
      base: m[3] ? (FACTORIES[m[2] as string] ?? `${m[2]}(…)`) : (m[2] as string),
    })),
  );
}

/** The classes whose chain of `extends` reaches a built-in error, with the chain. */
function errorClasses(declared: Declared[]): Map<Declared, string[]> {
  const byName = new Map<string, Declared[]>();
  for (const d of declared) byName.set(d.name, [...(byName.get(d.name) ?? []), d]);
  const chainOf = (d: Declared, seen: Set<string>): string[] | undefined => {
    if (BUILT_IN.includes(d.base)) return [d.name, d.base];
    if (seen.has(d.base)) return undefined;
    // A base declared in the same file first, else anywhere (imports name their class the same in this code base).
    const candidates = byName.get(d.base) ?? [];
    const base = candidates.find((c) => c.file === d.file) ?? candidates[0];
    if (base === undefined) return undefined;
    const rest = chainOf(base, new Set([...seen, d.name]));
    return rest && [d.name, ...rest];
  };
  const found = new Map<Declared, string[]>();
  for (const d of declared) {
    const chain = chainOf(d, new Set());
    if (chain) found.set(d, chain);
  }
  return found;
}

describe('failure types have one home', () => {
  const found = errorClasses(declaredClasses());
  const product = [...found].filter(([d]) => !NOT_THE_KIT.some((folder) => d.file.startsWith(folder)));

  it('finds the error classes of the tree, in the product and outside it', () => {
    const names = product.map(([d]) => d.name);
    expect(names).toEqual(expect.arrayContaining(['KitError', 'InputError', 'ValidationError', 'ConfigError']));
    expect([...found.keys()].some((d) => d.file.startsWith('sandbox/'))).toBe(true);
  });

  it('knows every class factory a class extends', () => {
    const unknown = declaredClasses()
      .filter((d) => d.base.endsWith('(…)') && !NOT_THE_KIT.some((folder) => d.file.startsWith(folder)))
      .map((d) => `${d.file}: ${d.name} extends ${d.base}`);
    expect(unknown).toEqual([]);
  });

  it(`declares every error class of the product in ${HOME}`, () => {
    const elsewhere = product.filter(([d]) => d.file !== HOME).map(([d, chain]) => `${d.file}: ${chain.join(' < ')}`);
    expect(elsewhere).toEqual([]);
  });

  it(`gives every error class of ${HOME} a retry rule: each is a KitError`, () => {
    const declaredHere = product.filter(([d]) => d.file === HOME).map(([d]) => d.name);
    const exported = Object.entries(errors).filter(
      ([name, value]) => typeof value === 'function' && declaredHere.includes(name),
    ) as [string, { prototype: object }][];
    // Every class declared there is exported, so that the check below sees each.
    expect(exported.map(([name]) => name).sort()).toEqual([...declaredHere].sort());
    const withoutRule = exported
      .filter(([name, cls]) => name !== 'KitError' && !(cls.prototype instanceof errors.KitError))
      .map(([name]) => name);
    expect(withoutRule).toEqual([]);
  });

  it('states each rule in Temporal terms, under a type name of its own', () => {
    const rules = Object.values(errors.FAILURE_RULES);
    for (const r of rules) expect(typeof r.retryable).toBe('boolean');
    expect(new Set(rules.map((r) => r.type)).size).toBe(rules.length);
  });
});
