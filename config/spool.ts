import { chmod, lstat, mkdir } from 'node:fs/promises';
import { UnsafeSpoolError } from '../connectors/errors.ts';

/**
 * The worker's spool directory (`SIGNAL_KIT_SPOOL_DIR`, config/worker.ts), made sure to be the worker's user's alone
 * before the worker starts: it holds paid answers (contact names and emails among them). Created 0700 when absent
 * (its missing parents too); refused with `UnsafeSpoolError`, which names the fix, when it is a symbolic link, not a
 * directory, owned by another user, or writable by its group or by others (another local user could then read the
 * answers, or plant files for the worker to publish).
 */
export async function ownSpoolDir(dir: string): Promise<string> {
  // A dangling symbolic link makes this fail: the check says what it is.
  await mkdir(dir, { recursive: true, mode: 0o700 }).catch(() => undefined);
  const mode = await checkSpoolDir(dir);
  // Its own, but others may list and read it (made by an earlier version, or by hand): closed to them now.
  if ((mode & 0o077) !== 0) await chmod(dir, 0o700);
  return dir;
}

/** Refuses a spool directory the worker's user does not have alone; returns its mode. */
async function checkSpoolDir(dir: string): Promise<number> {
  const info = await lstat(dir);
  if (info.isSymbolicLink()) {
    throw new UnsafeSpoolError(dir, 'is a symbolic link', `remove the link (rm ${dir}); the worker then creates it`);
  }
  if (!info.isDirectory()) throw new UnsafeSpoolError(dir, 'is not a directory', `remove it (rm ${dir})`);
  const uid = process.getuid?.();
  if (uid !== undefined && info.uid !== uid) {
    throw new UnsafeSpoolError(
      dir,
      `is owned by uid ${info.uid}, not by the worker's user (uid ${uid})`,
      `check what it holds, then chown -R ${uid} ${dir} && chmod 700 ${dir}`,
    );
  }
  if ((info.mode & 0o022) !== 0) {
    const who = info.mode & 0o002 ? 'every user' : 'its group';
    throw new UnsafeSpoolError(
      dir,
      `is writable by ${who} (mode ${(info.mode & 0o777).toString(8)})`,
      `check what it holds, then chmod 700 ${dir}`,
    );
  }
  return info.mode;
}
