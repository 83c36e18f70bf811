/**
 * No function of 120 lines or more in the product's own code (the sandboxes and the command table included): a function
 * that long does several jobs, and its steps should be functions named for what they do. Every function-like node
 * (declarations, methods, constructors, accessors, arrow functions and function expressions, nested ones included)
 * of every file in the folders below is measured with the TypeScript compiler's own parse of the project, from its
 * first token (leading comments not counted) to its closing brace.
 */
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { type Node, type SourceFile, SyntaxKind } from 'typescript/unstable/ast';
import { API } from 'typescript/unstable/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../../devstack/binaries.ts';

const root = repoRoot();
const FOLDERS = [
  'activities',
  'contract',
  'loader',
  'devstack',
  'workflows',
  'workers',
  'library',
  'intake',
  'connectors',
  'config',
  'cli',
  'sandbox',
  'crm-sandbox',
];
const LIMIT = 120;

const FUNCTION_KINDS = new Set<SyntaxKind>([
  SyntaxKind.FunctionDeclaration,
  SyntaxKind.FunctionExpression,
  SyntaxKind.ArrowFunction,
  SyntaxKind.MethodDeclaration,
  SyntaxKind.Constructor,
  SyntaxKind.GetAccessor,
  SyntaxKind.SetAccessor,
]);

function tsFiles(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return tsFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

interface Measured {
  where: string;
  lines: number;
}

/** A function's name as a reader finds it: its own, or the variable or property it is assigned to. */
function nameOf(node: Node): string {
  for (const candidate of [node, node.parent]) {
    const name = (candidate as { name?: Node }).name;
    if (name !== undefined) return (name as { text?: string }).text ?? '(computed)';
  }
  return '(anonymous)';
}

function lineOf(lineStarts: readonly number[], position: number): number {
  let low = 0;
  let high = lineStarts.length - 1;
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if ((lineStarts[middle] as number) <= position) low = middle;
    else high = middle - 1;
  }
  return low + 1;
}

/** Every function-like node of a source file, with its length in lines. */
function measureFunctions(file: string, source: SourceFile): Measured[] {
  const text = source.text;
  const lineStarts = [0, ...[...text.matchAll(/\n/g)].map((m) => (m.index as number) + 1)];
  const found: Measured[] = [];
  const visit = (node: Node): void => {
    if (FUNCTION_KINDS.has(node.kind)) {
      const first = lineOf(lineStarts, node.getStart(source));
      const last = lineOf(lineStarts, node.end - 1);
      found.push({ where: `${file}:${first} ${nameOf(node)}`, lines: last - first + 1 });
    }
    node.forEachChild(visit);
  };
  source.forEachChild(visit);
  return found;
}

describe('function length', () => {
  let api: API;
  let measured: Measured[];
  let unparsed: string[];

  beforeAll(() => {
    api = new API({ cwd: root });
    const program = api.updateSnapshot({ openProject: join(root, 'tsconfig.json') }).getProjects()[0]?.program;
    if (program === undefined) throw new Error('the TypeScript project of tsconfig.json did not load');
    measured = [];
    unparsed = [];
    for (const file of FOLDERS.flatMap(tsFiles)) {
      const source = program.getSourceFile(join(root, file));
      if (source === undefined) unparsed.push(relative(root, join(root, file)));
      else measured.push(...measureFunctions(file, source));
    }
  });
  afterAll(() => api?.close());

  it('measures every file of the folders, and finds their functions', () => {
    expect(unparsed).toEqual([]);
    // A measure that found nothing, or measured every function as one line, would pass the rule below vacuously.
    expect(measured.length).toBeGreaterThan(1000);
    expect(measured.filter((m) => m.lines >= 40).length).toBeGreaterThan(10);
  });

  it(`finds no function of ${LIMIT} lines or more in ${FOLDERS.join('/, ')}/`, () => {
    const long = measured.filter((m) => m.lines >= LIMIT).map((m) => `${m.where} (${m.lines} lines)`);
    expect(long).toEqual([]);
  });
});
