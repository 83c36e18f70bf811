/**
 * The folder rules of ARCHITECTURE.md that a reader relies on, checked over the import graph of the repository's
 * own TypeScript files (every relative `import`, `export … from` and `import()`, type-only ones included): nothing
 * outside test/ imports test/, the package build compiles no test code, and no two modules import each other through
 * any chain (a circle hides which of them is the lower layer).
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
    expect(graph.get('cli/program.ts')).toContain('config/errors.ts');
    expect([...graph.keys()].filter(isTest).length).toBeGreaterThan(50);
  });

  it('has nothing outside test/ importing test/ (product code, benchmarks, scripts)', () => {
    const offenders = [...graph]
      .filter(([file]) => !isTest(file))
      .flatMap(([file, targets]) => targets.filter(isTest).map((target) => `${file} -> ${target}`));
    expect(offenders).toEqual([]);
  });

  it('builds the package from no test code', () => {
    const build = JSON.parse(readFileSync(join(root, 'tsconfig.build.json'), 'utf8')) as { include: string[] };
    expect(build.include.filter((entry) => entry === 'test' || entry.startsWith('test/'))).toEqual([]);
  });

  it('has no import circle', () => {
    expect(findCircles(graph).map((circle) => circle.join(' > '))).toEqual([]);
  });
});
