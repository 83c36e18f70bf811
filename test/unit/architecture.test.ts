/**
 * The folder rules of ARCHITECTURE.md that a reader relies on, checked over the import graph of the repository's
 * own TypeScript files (every relative `import`, `export … from` and `import()`, type-only ones included): each
 * folder imports only what ARCHITECTURE.md's table allows it (the table is read from the file, so the document and
 * the check cannot drift apart), workflows and the sandbox import only the packages the document names, nothing
 * outside test/ imports test/, the package build compiles no test code, no two modules import each other through
 * any chain (a circle hides which of them is the lower layer), and failure types are named only in
 * connectors/errors.ts.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../../devstack/binaries.ts';

const root = repoRoot();
const SKIP = new Set(['node_modules', 'dist', 'out', '.tools', '.git', 'results']);

function sourceFiles(dir: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (SKIP.has(entry.name)) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...sourceFiles(path));
    else if (entry.name.endsWith('.ts')) found.push(relative(root, path));
  }
  return found;
}

const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)['"](\.{1,2}\/[^'"]+)['"]/gm;
/** Static imports and re-exports, with whether they are type-only (`import type …`, `export type … from`). */
const STATIC = /^\s*(?:import|export)\s+(type\s+)?(?:[^'";]*?\s+from\s+)?['"]([^'"]+)['"]/gm;

/** Each file's relative imports, as repository paths. */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles(root)) {
    const text = readFileSync(join(root, file), 'utf8');
    const targets = [...text.matchAll(SPECIFIER)].map((m) =>
      relative(root, resolve(root, dirname(file), m[1] as string)),
    );
    graph.set(file, targets);
  }
  return graph;
}

interface Import {
  file: string;
  /** A repository path for a relative import, else the package name (`node:fs`, `@temporalio/workflow`). */
  target: string;
  typeOnly: boolean;
}

/** Every import of every file, relative or of a package, and whether it is type-only. */
function imports(): Import[] {
  const found: Import[] = [];
  for (const file of sourceFiles(root)) {
    const text = readFileSync(join(root, file), 'utf8');
    for (const m of text.matchAll(STATIC)) {
      const specifier = m[2] as string;
      const target = specifier.startsWith('.') ? relative(root, resolve(root, dirname(file), specifier)) : specifier;
      found.push({ file, target, typeOnly: m[1] !== undefined });
    }
    for (const m of text.matchAll(/\bimport\s*\(\s*['"]([^'"]+)['"]/g)) {
      const specifier = m[1] as string;
      const target = specifier.startsWith('.') ? relative(root, resolve(root, dirname(file), specifier)) : specifier;
      found.push({ file, target, typeOnly: false });
    }
  }
  return found;
}

interface FolderRule {
  /** `x/` for a folder, a path for a single file. */
  name: string;
  mayImport: string[] | 'everything' | 'everything but test/';
  typesOnlyFrom: string[];
}

/** The rows of ARCHITECTURE.md's table "Folders and what each may import". */
function folderRules(): FolderRule[] {
  const text = readFileSync(join(root, 'ARCHITECTURE.md'), 'utf8');
  const section = text.slice(text.indexOf('## Folders and what each may import'));
  const rows = section
    .split('\n')
    .filter((line) => line.startsWith('| `'))
    .map((line) => line.split('|').map((cell) => cell.trim()));
  const names = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1] as string);
  return rows.map(([, folder, , may, types]) => ({
    name: names(folder as string)[0] as string,
    mayImport:
      may === 'everything'
        ? 'everything'
        : may?.startsWith('everything but')
          ? 'everything but test/'
          : names(may ?? ''),
    typesOnlyFrom: names(types ?? ''),
  }));
}

const within = (path: string, name: string) => (name.endsWith('/') ? path.startsWith(name) : path === name);

/** The most precise rule for a path: the longest name that contains it. */
function ruleFor(rules: FolderRule[], path: string): FolderRule | undefined {
  return rules.filter((r) => within(path, r.name)).sort((a, b) => b.name.length - a.name.length)[0];
}

const isTest = (file: string) => file.startsWith('test/');

function findCircles(graph: Map<string, string[]>): string[][] {
  const circles: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (file: string) => {
    state.set(file, 'open');
    stack.push(file);
    for (const next of graph.get(file) ?? []) {
      if (!graph.has(next)) continue;
      if (state.get(next) === 'open') circles.push([...stack.slice(stack.indexOf(next)), next]);
      else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(file, 'done');
  };
  for (const file of graph.keys()) if (!state.has(file)) visit(file);
  return circles;
}

describe('folder rules', () => {
  const graph = importGraph();

  it('reads the import graph of the whole repository', () => {
    expect(graph.get('cli/program.ts')).toContain('connectors/errors.ts');
    expect([...graph.keys()].filter(isTest).length).toBeGreaterThan(50);
  });

  it('has nothing outside test/ importing test/ (product code, benchmarks, scripts)', () => {
    const offenders = [...graph]
      .filter(([file]) => !isTest(file))
      .flatMap(([file, targets]) => targets.filter(isTest).map((target) => `${file} -> ${target}`));
    expect(offenders).toEqual([]);
  });

  it('builds the package from no test code and no test harness (test/, testkit/)', () => {
    const build = JSON.parse(readFileSync(join(root, 'tsconfig.build.json'), 'utf8')) as { include: string[] };
    const harness = (entry: string) => /^(test|testkit)(\/|$)/.test(entry);
    expect(build.include.filter(harness)).toEqual([]);
  });

  const rules = folderRules();
  const all = imports();

  it("reads ARCHITECTURE.md's folder table, which names every folder that holds code", () => {
    expect(rules.map((r) => r.name)).toEqual(expect.arrayContaining(['workflows/', 'connectors/errors.ts', 'test/']));
    const topLevel = new Set([...graph.keys()].map((file) => (file.includes('/') ? `${file.split('/')[0]}/` : file)));
    expect([...topLevel].filter((path) => !ruleFor(rules, path)).sort()).toEqual([]);
  });

  it('has each folder import only what its row allows', () => {
    const offenders = all
      .filter((i) => i.target.includes('/') || i.target.endsWith('.ts'))
      .filter((i) => graph.has(i.target))
      .flatMap((i) => {
        const own = ruleFor(rules, i.file);
        if (!own || own.mayImport === 'everything') return [];
        if (within(i.target, own.name)) return [];
        if (own.mayImport === 'everything but test/') return isTest(i.target) ? [`${i.file} -> ${i.target}`] : [];
        const allowed = [...own.mayImport, ...(i.typeOnly ? own.typesOnlyFrom : [])];
        return allowed.some((name) => within(i.target, name))
          ? []
          : [`${i.file} -> ${i.target}${i.typeOnly ? ' (type)' : ''}`];
      });
    expect(offenders).toEqual([]);
  });

  // Written out, not read from the table: a row widened to let a feed reach into a push's or a job's code, or a push
  // into a job's, fails here.
  it('has feeds import nothing of pushes or jobs, nor pushes of jobs: what they share lives in run/ and paid/', () => {
    const reaches = (from: string, into: string[]) =>
      all
        .filter((i) => i.file.startsWith(from) && into.some((folder) => i.target.startsWith(folder)))
        .map((i) => `${i.file} -> ${i.target}`);
    expect(
      all.some((i) => i.file === 'activities/feeds/finalize.ts' && i.target === 'activities/state/watermarks.ts'),
    ).toBe(true);
    expect(reaches('activities/feeds/', ['activities/push/', 'activities/jobs/'])).toEqual([]);
    expect(reaches('activities/push/', ['activities/jobs/'])).toEqual([]);
  });

  // Written out too: the run core is what every kind stands on, so it imports none of them nor the paid calls above it.
  it('has activities/run/ import nothing of the kinds or of paid/: no arrow upward inside activities/', () => {
    const upward = [
      'activities/paid/',
      'activities/jobs/',
      'activities/push/',
      'activities/feeds/',
      'activities/sync/',
      'activities/state/',
    ];
    const offenders = all
      .filter((i) => i.file.startsWith('activities/run/') && upward.some((folder) => i.target.startsWith(folder)))
      .map((i) => `${i.file} -> ${i.target}`);
    expect(offenders).toEqual([]);
  });

  // The incremental state sits between the run core and the kinds: every kind reaches its state through it, and it
  // knows of the kinds only the sync's answer types.
  it('has activities/state/ import nothing of the kinds but the types of a sync answer', () => {
    const kinds = ['activities/paid/', 'activities/jobs/', 'activities/push/', 'activities/feeds/', 'activities/sync/'];
    const offenders = all
      .filter((i) => i.file.startsWith('activities/state/') && kinds.some((folder) => i.target.startsWith(folder)))
      .filter((i) => !(i.typeOnly && i.target === 'activities/sync/types.ts'))
      .map((i) => `${i.file} -> ${i.target}`);
    expect(offenders).toEqual([]);
    const ownState = all.filter(
      (i) => /^activities\/(push|feeds|sync)\//.test(i.file) && i.target.startsWith('activities/state/'),
    );
    expect(new Set(ownState.map((i) => i.file.split('/')[1]))).toEqual(new Set(['push', 'feeds', 'sync']));
  });

  it('has contract/ import no package but zod: what a reader is handed holds no I/O', () => {
    const offenders = all
      .filter((i) => i.file.startsWith('contract/') && !i.target.startsWith('.') && !graph.has(i.target))
      .filter((i) => i.target !== 'zod' && !i.typeOnly)
      .map((i) => `${i.file} -> ${i.target}`);
    expect(offenders).toEqual([]);
  });

  it('has workflows import no package but the Temporal workflow SDK, and the sandboxes only Node and zod', () => {
    const packages = (folder: string) =>
      all.filter(
        (i) =>
          i.file.startsWith(folder) && !i.target.startsWith('.') && !graph.has(i.target) && !i.target.includes('.ts'),
      );
    const workflowPackages = packages('workflows/').filter(
      (i) => !['@temporalio/workflow', '@temporalio/common'].includes(i.target),
    );
    expect(workflowPackages.map((i) => `${i.file} -> ${i.target}`)).toEqual([]);
    const sandboxPackages = [...packages('sandbox/'), ...packages('crm-sandbox/')].filter(
      (i) => !i.target.startsWith('node:') && i.target !== 'zod',
    );
    expect(sandboxPackages.map((i) => `${i.file} -> ${i.target}`)).toEqual([]);
  });

  it('names failure types only in connectors/errors.ts: no string literal type anywhere else in the product', () => {
    const literalType = [
      /ApplicationFailure\.(?:nonRetryable|retryable)\([^;]*?,\s*['"]([A-Z]\w+)['"]/g,
      /ApplicationFailure\.create\(\{[^}]*?\btype:\s*['"]([A-Z]\w+)['"]/g,
      /nonRetryableErrorTypes:\s*\[[^\]]*?['"]([A-Z]\w+)['"]/g,
      /\.type\s*[!=]==\s*['"]([A-Z]\w+Error|[A-Z]\w+)['"]/g,
    ];
    const offenders = [...graph.keys()]
      .filter((file) => !isTest(file) && !file.startsWith('bench/') && file !== 'connectors/errors.ts')
      .flatMap((file) => {
        const text = readFileSync(join(root, file), 'utf8');
        return literalType.flatMap((pattern) => [...text.matchAll(pattern)].map((m) => `${file}: '${m[1]}'`));
      });
    expect(offenders).toEqual([]);
  });

  it('has no import circle', () => {
    expect(findCircles(graph).map((circle) => circle.join(' > '))).toEqual([]);
  });
});
