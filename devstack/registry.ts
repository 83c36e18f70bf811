import { mkdirSync, readdirSync, readFileSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * A record of every server process group the dev stack started, one file per group under
 * os.tmpdir()/signal-kit-stack/, so that a test run (or the next start) can prove nothing outlived its owner.
 */
export interface GroupRecord {
  pgid: number;
  name: string;
  command: string;
  ownerPid: number;
  /** SIGNAL_KIT_STACK_RUN of the owner: the test run (set by the vitest global setup) it belongs to. */
  runId: string | null;
  startedAt: string;
  /** The server's temporary state directory, removed when a leftover group is reaped. */
  stateDir?: string;
}

export const RUN_ID_ENV = 'SIGNAL_KIT_STACK_RUN';

export function registryDir(): string {
  return join(tmpdir(), 'signal-kit-stack');
}

export function registerGroup(record: GroupRecord): void {
  mkdirSync(registryDir(), { recursive: true });
  writeFileSync(join(registryDir(), `${record.pgid}.json`), JSON.stringify(record));
}

export function unregisterGroup(pgid: number): void {
  rmSync(join(registryDir(), `${pgid}.json`), { force: true });
}

export function listGroups(): GroupRecord[] {
  let names: string[];
  try {
    names = readdirSync(registryDir());
  } catch {
    return [];
  }
  const records: GroupRecord[] = [];
  for (const name of names) {
    if (!name.endsWith('.json')) continue;
    try {
      records.push(JSON.parse(readFileSync(join(registryDir(), name), 'utf8')) as GroupRecord);
    } catch {
      // half-written or foreign file
    }
  }
  return records;
}

/** True while any process of the group exists (EPERM means it exists but belongs to someone else). */
export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The group leader still runs the recorded binary (guards against a recycled pid). */
function leaderRuns(record: GroupRecord): boolean {
  try {
    return readFileSync(`/proc/${record.pgid}/cmdline`, 'utf8').split('\0')[0] === record.command;
  } catch {
    return process.platform !== 'linux';
  }
}

/** Removes a reaped server's temporary directory, and its dev-stack parent once that is empty. */
function removeStateDir(dir: string): void {
  if (!dir.startsWith(tmpdir())) return;
  try {
    rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
    const parent = dirname(dir);
    if (basename(parent).startsWith('signal-kit-dev-')) rmdirSync(parent);
  } catch {
    // not empty yet (another server of the stack) or already gone
  }
}

/**
 * Kills the groups of a finished test run (runId given) or of owners that died without stopping their servers
 * (runId omitted), removes their state, and forgets records whose group is gone. Returns those still alive.
 */
export async function reapGroups(filter: { runId?: string } = {}): Promise<GroupRecord[]> {
  const leftovers: GroupRecord[] = [];
  for (const record of listGroups()) {
    const selected = filter.runId !== undefined ? record.runId === filter.runId : !processAlive(record.ownerPid);
    if (!selected) continue;
    if (groupAlive(record.pgid) && leaderRuns(record)) {
      leftovers.push(record);
      try {
        process.kill(-record.pgid, 'SIGKILL');
      } catch {
        // already gone
      }
      for (let waited = 0; groupAlive(record.pgid) && leaderRuns(record) && waited < 2_000; waited += 25)
        await sleep(25);
    }
    if (!groupAlive(record.pgid) || !leaderRuns(record)) {
      if (record.stateDir) removeStateDir(record.stateDir);
      unregisterGroup(record.pgid);
    }
  }
  return leftovers;
}
