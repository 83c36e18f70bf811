/**
 * A real full disk for the drills: a small tmpfs of its own (so that filling it fills nothing else; mounting needs
 * root, as CI runs), and a ballast file that fills it up to a chosen room.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';

export interface SmallDisk {
  readonly path: string;
  unmount(): void;
}

/** Mounts a tmpfs of `size` (e.g. `24m`) at `path`, readable by its owner only. */
export function mountSmallDisk(path: string, size: string): SmallDisk {
  mkdirSync(path, { recursive: true });
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size},mode=0700`, 'tmpfs', path]);
  return { path, unmount: () => execFileSync('umount', ['-l', path]) };
}

/**
 * Fills the disk at `dir`, then frees `room` bytes of it: written until the disk refuses, so that what a run writes
 * meanwhile does not matter. Returns the ballast file (remove it to free the space).
 */
export async function fillDisk(dir: string, room: number): Promise<string> {
  const ballast = join(dir, 'ballast');
  const handle = await open(ballast, 'w');
  const chunk = Buffer.alloc(64 * 1024, 1);
  let size = 0;
  try {
    for (;;) size += (await handle.write(chunk)).bytesWritten;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
  }
  await handle.truncate(Math.max(0, size - room));
  await handle.close();
  return ballast;
}
