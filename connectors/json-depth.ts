/**
 * Whether a parsed JSON value nests arrays/objects deeper than `maxDepth` (a scalar has depth 0, `{}` and `[]`
 * depth 1). Iterative, and stops at the first path that is too deep: recursive walkers (JSON.stringify, schema
 * validation, structured clone) overflow the stack on inputs nested a few thousand levels deep, so this check runs
 * before any of them sees the value.
 */
export function exceedsJsonDepth(value: unknown, maxDepth: number): boolean {
  if (value === null || typeof value !== 'object') return false;
  const stack: Array<{ node: object; depth: number }> = [{ node: value, depth: 1 }];
  while (stack.length > 0) {
    const { node, depth } = stack.pop()!;
    if (depth > maxDepth) return true;
    const children = Array.isArray(node) ? node : Object.values(node);
    for (const child of children) {
      if (child !== null && typeof child === 'object') stack.push({ node: child, depth: depth + 1 });
    }
  }
  return false;
}
