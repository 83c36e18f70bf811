/**
 * The worker's spool holds paid answers (contact names and emails): it is the worker's user's alone, and nothing
 * planted there reaches the output. A spool another user made first, one anyone may write to, or a symbolic link is
 * refused at worker start with the fix named; entries are written 0600 in 0700 folders and leave no temporary file
 * behind when the disk refuses; and a re-run publishes only an entry whose key lies in its job's folder and that
 * passes the proof a part in the output passes.
 */

import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { chmod, chown, lstat, mkdir, readdir, stat, symlink, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { partKey } from '../../../activities/jobs/layout.ts';
import { linesPartIdentity } from '../../../activities/jobs/part-identity.ts';
import type { JobRef } from '../../../activities/jobs/types.ts';
import { PartSpool } from '../../../activities/paid/spool.ts';
import { encodePart, partMetadata, writePart, zeroCounts } from '../../../activities/run/parts.ts';
import { ownSpoolDir } from '../../../config/spool.ts';
import { openStore } from '../../../config/storage.ts';
import { defaultSpoolDir, parseApiConfig, parseWorkerConfig } from '../../../config/worker.ts';
import { UnsafeSpoolError } from '../../../connectors/errors.ts';
import { runCli } from '../../../testkit/cli-process.ts';
import { startWorker } from '../../../workers/worker.ts';
import { useTempDir } from '../../helpers/temp-dir.ts';

const tempDir = useTempDir('spool-safety');
const root = process.getuid?.() === 0;
/** Planting a spool as another user needs root; under CI=true (which runs as root) a lack of it fails, never skips. */
const canChown = root || process.env['CI'] === 'true';

/** Every file and folder under `dir`, with its mode. */
async function modesUnder(dir: string): Promise<{ path: string; dir: boolean; mode: number }[]> {
  const found: { path: string; dir: boolean; mode: number }[] = [];
  for (const name of await readdir(dir, { recursive: true })) {
    const info = await lstat(join(dir, name));
    found.push({ path: name, dir: info.isDirectory(), mode: info.mode & 0o777 });
  }
  return found;
}

describe("the spool's place", () => {
  it('defaults to the state directory of the user ($XDG_STATE_HOME, else ~/.local/state), never a shared folder', () => {
    expect(defaultSpoolDir({ XDG_STATE_HOME: '/srv/state' }, '/home/ana')).toBe('/srv/state/signal-kit/spool');
    expect(defaultSpoolDir({}, '/home/ana')).toBe('/home/ana/.local/state/signal-kit/spool');
    // A relative XDG_STATE_HOME is invalid (XDG Base Directory) and ignored.
    expect(defaultSpoolDir({ XDG_STATE_HOME: 'state' }, '/home/ana')).toBe('/home/ana/.local/state/signal-kit/spool');
    const env = { SIGNAL_API_URL: 'http://127.0.0.1:1', SIGNAL_API_KEY: 'k', XDG_STATE_HOME: '/srv/state' };
    expect(parseApiConfig(env).spoolDir).toBe('/srv/state/signal-kit/spool');
    expect(parseApiConfig({ ...env, SIGNAL_KIT_SPOOL_DIR: '/data/spool' }).spoolDir).toBe('/data/spool');
  });

  it('is created 0700 (its missing parents too) when absent', async () => {
    const dir = join(tempDir(), 'fresh', 'state', 'spool');
    await ownSpoolDir(dir);
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    expect((await stat(join(tempDir(), 'fresh', 'state'))).mode & 0o777).toBe(0o700);
  });

  it('one of its own that others may read (0755, an earlier version made it so) is closed to them (0700)', async () => {
    const dir = join(tempDir(), 'readable');
    await mkdir(dir);
    await chmod(dir, 0o755);
    await ownSpoolDir(dir);
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
  });

  it.each([
    ['world-writable', 0o777, /writable by every user \(mode 777\): check what it holds, then chmod 700 /],
    ['group-writable', 0o770, /writable by its group \(mode 770\): check what it holds, then chmod 700 /],
  ])('a %s spool is refused at start, naming the path and the fix', async (name, mode, message) => {
    const dir = join(tempDir(), name);
    await mkdir(dir);
    await chmod(dir, mode);
    const error = await ownSpoolDir(dir).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnsafeSpoolError);
    expect((error as UnsafeSpoolError).path).toBe(dir);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).toContain(dir);
  });

  it.skipIf(!canChown)('a spool another user created first is refused, naming chown', async () => {
    const dir = join(tempDir(), 'theirs');
    await mkdir(dir, { mode: 0o700 });
    await chown(dir, 65534, 65534);
    const error = await ownSpoolDir(dir).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnsafeSpoolError);
    expect((error as Error).message).toMatch(/is owned by uid 65534, not by the worker's user \(uid 0\)/);
    expect((error as Error).message).toContain(`chown -R 0 ${dir} && chmod 700 ${dir}`);
  });

  it('a spool reached through a symbolic link is refused, also a dangling one', async () => {
    const target = join(tempDir(), 'elsewhere');
    await mkdir(target, { mode: 0o700 });
    for (const [link, to] of [
      ['link', target],
      ['dangling', join(tempDir(), 'nothing-here')],
    ] as const) {
      await symlink(to, join(tempDir(), link));
      const error = await ownSpoolDir(join(tempDir(), link)).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(UnsafeSpoolError);
      expect((error as Error).message).toMatch(/is a symbolic link: remove the link/);
    }
  });

  it('a worker does not start on such a spool, before it connects to anything', async () => {
    const dir = join(tempDir(), 'worker-start');
    await mkdir(dir);
    await chmod(dir, 0o777);
    const config = parseWorkerConfig({
      TEMPORAL_ADDRESS: '127.0.0.1:1',
      SIGNAL_API_URL: 'http://127.0.0.1:1',
      SIGNAL_API_KEY: 'k',
      SIGNAL_KIT_SPOOL_DIR: dir,
    });
    const error = await startWorker({ config }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnsafeSpoolError);
    expect((error as Error).message).toContain(`chmod 700 ${dir}`);
  });

  it('`signal-kit worker` on such a spool exits 2 with the fix, before it starts anything', async () => {
    const dir = join(tempDir(), 'cli-start');
    await mkdir(dir);
    await chmod(dir, 0o777);
    const env = {
      PATH: process.env.PATH ?? '',
      HOME: tempDir(),
      TEMPORAL_ADDRESS: '127.0.0.1:1',
      SIGNAL_API_URL: 'http://127.0.0.1:1',
      SIGNAL_API_KEY: 'k',
      SIGNAL_KIT_SPOOL_DIR: dir,
    };
    const result = await runCli(['worker'], env, 60_000);
    expect(result.timedOut).toBe(false);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`chmod 700 ${dir}`);
  });

  it('a spool that is a file is refused', async () => {
    const file = join(tempDir(), 'a-file');
    await writeFile(file, '');
    expect(await ownSpoolDir(file).catch((e: unknown) => e)).toBeInstanceOf(UnsafeSpoolError);
  });
});

/** A job's one batch, its part written through `target` (the spool when the output refused it). */
function jobPart(jobId: string) {
  const output = pathToFileURL(join(tempDir(), `out-${jobId}`)).href;
  const job: JobRef = { jobId, kind: 'enrich', output };
  const key = partKey(job, 0);
  const identity = linesPartIdentity(job, key);
  const counts = { ...zeroCounts(), lines: 2, ok: 2, credits: 4 };
  const lines = [{ domain: 'a.com', email: 'ana@a.com' }, { domain: 'b.com' }];
  return {
    store: openStore(output),
    job,
    key,
    identity,
    counts,
    lines,
    write: (target: ReturnType<typeof openStore>) =>
      writePart(target, 'gzip', key, lines, counts, 'done', [], identity),
  };
}

describe("the spool's entries", () => {
  it('are written 0600 in folders of 0700', async () => {
    const spool = await PartSpool.open(await ownSpoolDir(join(tempDir(), 'modes')));
    const { store, key, write } = jobPart('modes-job');
    await write(spool.keepOnly(store, { key, fingerprint: undefined }));
    const found = await modesUnder(spool.dir);
    expect(found.filter((entry) => !entry.dir)).toHaveLength(2); // the body and its metadata
    for (const entry of found) expect(entry, entry.path).toMatchObject({ mode: entry.dir ? 0o700 : 0o600 });
  });

  it("a crashed worker's temporary files are removed when a worker opens the spool, a running write's are not", async () => {
    const dir = await ownSpoolDir(join(tempDir(), 'leftovers'));
    const folder = join(dir, 'a'.repeat(24), 'b'.repeat(16));
    await mkdir(folder, { recursive: true, mode: 0o700 });
    const hourAgo = new Date(Date.now() - 2 * 60 * 60 * 1000);
    for (const name of ['000000000000001-000000-0123456789abcdef.bin.tmp', 'x.bin.0123456789ab.tmp']) {
      await writeFile(join(folder, name), '');
      await utimes(join(folder, name), hourAgo, hourAgo);
    }
    await writeFile(join(folder, 'y.bin.ba9876543210.tmp'), 'being written');
    await PartSpool.open(dir);
    expect(await readdir(folder)).toEqual(['y.bin.ba9876543210.tmp']);
  });

  it('a body the metadata does not describe (a forged or spoiled entry for the job) is never published', async () => {
    const spool = new PartSpool(join(tempDir(), 'forged'));
    const { store, job, key, identity, counts, lines } = jobPart('forged-job');
    const body = encodePart('gzip', lines);
    const metadata = partMetadata(
      // Another body's checksum, at this body's size: what a hand-made entry would carry.
      'a'.repeat(64),
      counts,
      'done',
      [],
      identity,
      body.length,
    );
    await spool.keep(store.url, key, body, { metadata }, { key, fingerprint: undefined, write: 'w1' });
    // An entry whose line count is not what its counts say, its checksum right.
    const short = encodePart('gzip', lines.slice(0, 1));
    const sha = createHash('sha256').update(short).digest('hex');
    await spool.keep(
      store.url,
      key,
      short,
      { metadata: partMetadata(sha, counts, 'done', [], identity, short.length) },
      { key, fingerprint: undefined, write: 'w2' },
    );
    // No metadata at all.
    await spool.keep(store.url, key, body, {}, { key, fingerprint: undefined, write: 'w3' });
    expect(await spool.publish(store, `${job.jobId}/`)).toBe(0);
    expect(await store.exists(key)).toBe(false);
  });

  it('an entry whose key lies outside its job folder, or that another job wrote, is never published', async () => {
    const spool = new PartSpool(join(tempDir(), 'outside'));
    const { store, job, key, write } = jobPart('outside-job');
    const other = jobPart('other-job');
    // The other job's part as its own worker would keep it (its metadata right), under keys of this job's folder.
    const body = encodePart('gzip', other.lines);
    const sha = createHash('sha256').update(body).digest('hex');
    const metadata = partMetadata(sha, other.counts, 'done', [], other.identity, body.length);
    const keep = (at: string, write: string) =>
      spool.keep(store.url, at, body, { metadata }, { key: at, fingerprint: undefined, write });
    await keep(`${job.jobId}/../${other.key}`, 'climbing'); // lies in the spool's folder of this job, resolves outside
    await keep(`${job.jobId}/./parts/../../${other.key}`, 'dotted');
    await keep(key, 'theirs'); // another job's part, published as this job's
    expect(await spool.publish(store, `${job.jobId}/`)).toBe(0);
    expect(await readdir(join(tempDir(), 'out-outside-job')).catch(() => [])).toEqual([]);
    expect(await store.exists(other.key)).toBe(false);

    // What this worker kept of the job itself is published.
    await write(spool.keepOnly(store, { key, fingerprint: undefined }));
    expect(await spool.publish(store, `${job.jobId}/`)).toBe(1);
  });

  it.skipIf(!canChown)(
    'a full spool disk leaves no temporary file; the entry is held in memory and still published',
    async () => {
      const mount = join(tempDir(), 'tiny');
      await mkdir(mount, { mode: 0o700 });
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k,mode=0700', 'tmpfs', mount]);
      try {
        const spool = await PartSpool.open(await ownSpoolDir(join(mount, 'spool')));
        const { store, key, identity, counts } = jobPart('full-spool');
        // Incompressible lines: their part is larger than the spool's disk.
        const lines = Array.from({ length: 4 }, (_, i) => ({ i, noise: randomText(40_000) }));
        await writePart(
          spool.keepOnly(store, { key, fingerprint: undefined }),
          'gzip',
          key,
          lines,
          { ...counts, lines: lines.length },
          'done',
          [],
          identity,
        );
        expect((await modesUnder(spool.dir)).filter((entry) => !entry.dir)).toEqual([]);
        expect(await spool.publish(store, 'full-spool/')).toBe(1);
        expect(await store.exists(key)).toBe(true);
      } finally {
        execFileSync('umount', [mount]);
      }
    },
  );
});

function randomText(length: number): string {
  return randomBytes(length).toString('base64').slice(0, length);
}
