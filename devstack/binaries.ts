import { existsSync, readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The pinned server binaries the dev stack runs; versions match scripts/install-tools.sh. */
export const TOOLS = {
  temporal: { version: 'v1.5.1', envVar: 'TEMPORAL_CLI_PATH' },
  versitygw: { version: 'v1.7.0', envVar: 'VERSITYGW_PATH' },
  'fake-gcs-server': { version: 'v1.55.1', envVar: 'FAKE_GCS_SERVER_PATH' },
} as const;

export type ToolName = keyof typeof TOOLS;

export class MissingBinaryError extends Error {
  readonly tool: ToolName;
  constructor(tool: ToolName, looked: string[]) {
    const { envVar } = TOOLS[tool];
    super(
      `${tool} binary not found (looked in: ${looked.join(', ')}). ` +
        `Run \`npm run tools\` to build the pinned tools, or set ${envVar} to the path of a ${tool} binary.`,
    );
    this.name = 'MissingBinaryError';
    this.tool = tool;
  }
}

/** The per-user cache shared by every clone on this machine (same rule as scripts/lib.sh). */
export function cacheDir(): string {
  const explicit = process.env['SIGNAL_KIT_CACHE'];
  if (explicit) return explicit;
  return join(process.env['XDG_CACHE_HOME'] || join(homedir(), '.cache'), 'signal-kit');
}

/** The repository root: the nearest ancestor holding the signal-kit package.json (works from src and dist). */
export function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg)) {
      try {
        if ((JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string }).name === 'signal-kit') return dir;
      } catch {
        // not ours; keep walking up
      }
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error('cannot find the signal-kit repository root');
    dir = parent;
  }
}

function isExecutableFile(path: string): boolean {
  try {
    return statSync(path).isFile() && (statSync(path).mode & 0o111) !== 0;
  } catch {
    return false;
  }
}

/** Environment override, else .tools/bin/<name>, else the cache path; throws MissingBinaryError with the fix. */
export function locateBinary(tool: ToolName): string {
  const { envVar, version } = TOOLS[tool];
  const override = process.env[envVar];
  if (override) {
    if (!isExecutableFile(override)) throw new Error(`${envVar}=${override} is not an executable file`);
    return override;
  }
  const candidates = [join(repoRoot(), '.tools', 'bin', tool), join(cacheDir(), 'tools', `${tool}-${version}`, tool)];
  const found = candidates.find(isExecutableFile);
  if (!found) throw new MissingBinaryError(tool, [`$${envVar}`, ...candidates]);
  return found;
}
