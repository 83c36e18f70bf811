import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { groupAlive, listGroups, startDevStack } from '../../devstack/index.ts';
import { RUN_ID_ENV, reapGroups } from '../../devstack/registry.ts';

const run = promisify(execFile);
const helper = fileURLToPath(new URL('./helpers/start-and-exit.ts', import.meta.url));

describe('dev stack: processes', () => {
  it('starts all three servers in parallel and leaves no process group behind after stop', async () => {
    const started = Date.now();
    const stack = await startDevStack();
    const startMs = Date.now() - started;
    const pgids = [stack.temporal.process().pid, stack.s3.process().pid, stack.gcs.process().pid];
    try {
      for (const pgid of pgids) expect(groupAlive(pgid)).toBe(true);
      expect(listGroups().map((r) => r.pgid)).toEqual(expect.arrayContaining(pgids));
      expect(stack.env()).toMatchObject({
        TEMPORAL_ADDRESS: stack.temporal.address,
        AWS_ENDPOINT_URL_S3: stack.s3.endpoint,
        STORAGE_EMULATOR_HOST: stack.gcs.emulatorHost,
      });
      // Parallel start: the three together should take about as long as the slowest one.
      expect(startMs).toBeLessThan(30_000);
    } finally {
      await stack.stop();
    }
    for (const pgid of pgids) {
      expect(() => process.kill(-pgid, 0)).toThrow(expect.objectContaining({ code: 'ESRCH' }));
    }
    expect(listGroups().map((r) => r.pgid)).not.toEqual(expect.arrayContaining([pgids[0]]));
    expect(existsSync(stack.stateDir)).toBe(false);
  });

  it('kills the servers of a process that exits without stopping them', async () => {
    const { stdout } = await run(process.execPath, [helper], { timeout: 60_000 });
    const { pgid, stateDir } = JSON.parse(stdout.trim()) as { pgid: number; stateDir: string };
    expect(pgid).toBeGreaterThan(0);
    // SIGKILLed at exit; init may take a moment to reap the orphaned zombie.
    await expect.poll(() => groupAlive(pgid), { timeout: 5_000 }).toBe(false);
    expect(listGroups().some((r) => r.pgid === pgid)).toBe(false);
    expect(existsSync(stateDir)).toBe(false);
  });

  it('reaps the servers a crashed process orphaned (what the global teardown does after the run)', async () => {
    const runId = `orphan-test-${randomUUID()}`;
    const output = await new Promise<string>((resolve) => {
      execFile(
        process.execPath,
        [helper, '--crash'],
        { timeout: 60_000, env: { ...process.env, [RUN_ID_ENV]: runId } },
        (_err, stdout) => resolve(stdout),
      );
    });
    const { pgid, stateDir } = JSON.parse(output.trim()) as { pgid: number; stateDir: string };
    try {
      expect(groupAlive(pgid)).toBe(true);
      const leftovers = await reapGroups({ runId });
      expect(leftovers.map((r) => r.pgid)).toEqual([pgid]);
      await expect.poll(() => groupAlive(pgid), { timeout: 5_000 }).toBe(false);
      expect(await reapGroups({ runId })).toEqual([]);
      expect(listGroups().some((r) => r.pgid === pgid)).toBe(false);
      // Its state went with it.
      expect(existsSync(stateDir)).toBe(false);
    } finally {
      await rm(stateDir, { recursive: true, force: true });
    }
  });
});
