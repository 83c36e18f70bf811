import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
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

/** The PostgreSQL server programs the dev stack runs: from the system's packages, not built here. */
export const POSTGRES_BIN_ENV = 'POSTGRES_BIN_DIR';
const POSTGRES_PROGRAMS = ['initdb', 'postgres'] as const;

export class MissingPostgresError extends Error {
  constructor(looked: string[]) {
    super(
      `PostgreSQL server programs (initdb, postgres) not found (looked in: ${looked.join(', ') || 'nothing'}). ` +
        'Install them (Debian/Ubuntu: apt-get install postgresql; `sh scripts/install-tools.sh` does it when run ' +
        `as root), or set ${POSTGRES_BIN_ENV} to the folder holding initdb and postgres.`,
    );
    this.name = 'MissingPostgresError';
  }
}

const holdsPostgres = (dir: string) => POSTGRES_PROGRAMS.every((name) => isExecutableFile(join(dir, name)));

/** `pg_config --bindir` of the pg_config on PATH (Debian's points at the newest installed server). */
function pgConfigBinDir(): string | undefined {
  try {
    return execFileSync('pg_config', ['--bindir'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return undefined;
  }
}

/** Debian's and Ubuntu's layout, /usr/lib/postgresql/<major>/bin, newest major first. */
function debianBinDirs(): string[] {
  const root = '/usr/lib/postgresql';
  try {
    return readdirSync(root)
      .filter((name) => /^\d+$/.test(name))
      .sort((a, b) => Number(b) - Number(a))
      .map((major) => join(root, major, 'bin'));
  } catch {
    return [];
  }
}

/**
 * The folder holding `initdb` and `postgres`: $POSTGRES_BIN_DIR, else `pg_config --bindir`, else the newest of
 * Debian's /usr/lib/postgresql/<major>/bin, else a folder on PATH. Throws MissingPostgresError with the fix.
 */
export function locatePostgres(): string {
  const override = process.env[POSTGRES_BIN_ENV];
  if (override) {
    if (!holdsPostgres(override)) throw new Error(`${POSTGRES_BIN_ENV}=${override} does not hold initdb and postgres`);
    return override;
  }
  const onPath = (process.env['PATH'] ?? '').split(delimiter).filter(Boolean);
  const candidates = [pgConfigBinDir(), ...debianBinDirs(), ...onPath].filter((dir): dir is string => !!dir);
  const found = candidates.find(holdsPostgres);
  if (!found) throw new MissingPostgresError([`$${POSTGRES_BIN_ENV}`, ...new Set(candidates)]);
  return found;
}
