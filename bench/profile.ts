/**
 * Summarizes V8 CPU profiles (`.cpuprofile`, as written by `bench/run.ts --profile DIR` or `node --cpu-prof`): the
 * functions with the most self time, and self time per file, so that "where does the time go" has an answer.
 *
 *   node bench/profile.ts FILE.cpuprofile [--top 25]
 */
import { readFile } from 'node:fs/promises';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

const root = fileURLToPath(new URL('../', import.meta.url));

function where(url: string): string {
  if (!url) return '(native)';
  const path = url.startsWith('file://') ? fileURLToPath(url) : url;
  const rel = relative(root, path);
  return rel.startsWith('node_modules/')
    ? rel.replace(/^node_modules\/((?:@[^/]+\/)?[^/]+).*$/, '$1')
    : rel.startsWith('..')
      ? path
      : rel;
}

export function summarize(profile: CpuProfile, top = 25): string {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfMs = new Map<number, number>();
  profile.samples.forEach((id, i) => {
    selfMs.set(id, (selfMs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000);
  });
  const totalMs = (profile.endTime - profile.startTime) / 1000;
  const fns = new Map<string, number>();
  const files = new Map<string, number>();
  for (const [id, ms] of selfMs) {
    const frame = byId.get(id)!.callFrame;
    if (frame.functionName === '(idle)') {
      fns.set('(idle)', (fns.get('(idle)') ?? 0) + ms);
      continue;
    }
    const file = where(frame.url);
    const fn = `${frame.functionName || '(anonymous)'}  ${file}${frame.url ? `:${frame.lineNumber + 1}` : ''}`;
    fns.set(fn, (fns.get(fn) ?? 0) + ms);
    files.set(file, (files.get(file) ?? 0) + ms);
  }
  const idle = fns.get('(idle)') ?? 0;
  const busy = totalMs - idle;
  const list = (map: Map<string, number>) =>
    [...map]
      .filter(([name]) => !name.startsWith('(idle)'))
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, ms]) => `${ms.toFixed(0).padStart(8)} ms ${((ms / busy) * 100).toFixed(1).padStart(5)} %  ${name}`)
      .join('\n');
  return [
    `profile: ${totalMs.toFixed(0)} ms, busy ${busy.toFixed(0)} ms (${((busy / totalMs) * 100).toFixed(0)} %)`,
    '',
    'self time by file or package:',
    list(files),
    '',
    'self time by function:',
    list(fns),
  ].join('\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { top: { type: 'string', default: '25' } },
  });
  for (const file of positionals) {
    console.log(
      `# ${file}\n${summarize(JSON.parse(await readFile(file, 'utf8')) as CpuProfile, Number(values.top))}\n`,
    );
  }
}
