/**
 * What the spool check costs each paid batch: before it may pay, every batch publishes what the worker's spool kept
 * of its job (`PartSpool.publish`, activities/paid/paid-batch.ts), and a batch of single calls checks again before
 * each call. For a job with nothing spooled (the usual case), in two states of the spool: empty, and holding
 * `--others` parts of `--kib` KiB that other jobs of the same output left there (runs that stopped on a refusal and
 * were never run again on this worker).
 *
 * A = the spool check, B (baseline) = the part lookup every batch makes anyway right after it (`readPart` of a part
 * not written yet: one stat), on a local file store, alternating A and B each round; the median of the per-round
 * ratios is printed. With `--compare <module>`, another `PartSpool` (for instance the one before the spool was kept
 * per job: `git show 0e0381e:activities/jobs/spool.ts > activities/jobs/spool-before.ts`, removed after) runs in the
 * same rounds (A′).
 *
 *   node bench/micro/spool-check.ts [--rounds 30] [--checks 200] [--others 50] [--kib 256] [--compare module.ts]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { partKey } from '../../activities/jobs/layout.ts';
import { jobPartIdentity } from '../../activities/jobs/part-identity.ts';
import type { JobRef } from '../../activities/jobs/types.ts';
import { PartSpool } from '../../activities/paid/spool.ts';
import { readPart } from '../../activities/run/parts.ts';
import { openStore } from '../../config/storage.ts';
import type { Store } from '../../connectors/storage/store.ts';
import { parseScriptFlags } from '../lib/script-io.ts';
import { median } from '../lib/stats.ts';

/** The part of `PartSpool` measured here, as both implementations have it. */
interface Spool {
  keep(url: string, key: string, data: Uint8Array): Promise<boolean>;
  publish(store: Store, prefix: string): Promise<number>;
}

const usage = 'node bench/micro/spool-check.ts [--rounds N] [--checks N] [--others N] [--kib N] [--compare M]';
const flags = parseScriptFlags(usage, [], {
  rounds: '30',
  checks: '200',
  others: '50',
  kib: '256',
  compare: undefined,
});
const rounds = Number(flags.rounds);
const checks = Number(flags.checks);
const others = Number(flags.others);
const kib = Number(flags.kib);
const Compared = flags.compare
  ? ((await import(pathToFileURL(resolve(flags.compare)).href)) as { PartSpool: new (dir: string) => Spool }).PartSpool
  : undefined;

const dir = await mkdtemp(join(tmpdir(), 'spool-check-'));
const store = openStore(pathToFileURL(join(dir, 'out')).href);
const job: JobRef = { jobId: 'bench-job', kind: 'enrich', output: store.url };
const key = partKey(job, 0);
const identity = jobPartIdentity(job, 0);

/** Microseconds per call of `fn`, over `checks` calls. */
async function perCheckUs(fn: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  for (let i = 0; i < checks; i++) await fn();
  return ((performance.now() - start) * 1000) / checks;
}

/** Leaves `others` spooled parts of other jobs of the same output in `spool`. */
async function leaveOthers(spool: Spool): Promise<void> {
  const body = new Uint8Array(kib * 1024).fill(7);
  for (let i = 0; i < others; i++) await spool.keep(store.url, `other-${i}/parts/part-00000.jsonl.gz`, body);
}

async function measure(label: string, spools: { a: Spool; c: Spool | undefined }): Promise<void> {
  const check = (spool: Spool) => () => spool.publish(store, `${job.jobId}/`);
  const base = () => readPart(store, key, identity);
  const sides = { a: check(spools.a), b: base, c: spools.c ? check(spools.c) : undefined };
  for (let i = 0; i < 3; i++) for (const fn of Object.values(sides)) if (fn) await fn();
  const times: Record<'a' | 'b' | 'c', number[]> = { a: [], b: [], c: [] };
  for (let r = 0; r < rounds; r++) {
    // Alternated, so that a drifting (shared) machine weighs on every side alike.
    const order = r % 2 ? (['b', 'a', 'c'] as const) : (['c', 'a', 'b'] as const);
    for (const side of order) {
      const fn = sides[side];
      if (fn) times[side].push(await perCheckUs(fn));
    }
  }
  const ratio = (x: number[], y: number[]) => median(x.map((v, i) => v / (y[i] as number))).toFixed(2);
  console.log(`\n${label}`);
  console.log(`A  spool check (per job folder) : ${median(times.a).toFixed(1)} µs per batch`);
  console.log(`B  part lookup (readPart, stat) : ${median(times.b).toFixed(1)} µs per batch`);
  console.log(`A/B (median of rounds)          : ${ratio(times.a, times.b)}×`);
  if (spools.c) {
    console.log(`A′ --compare module             : ${median(times.c).toFixed(1)} µs per batch`);
    console.log(`A′/B                            : ${ratio(times.c, times.b)}×`);
    console.log(`A′/A (compared over new)        : ${ratio(times.c, times.a)}×`);
  }
}

try {
  const a = new PartSpool(join(dir, 'spool-a'));
  const c = Compared ? new Compared(join(dir, 'spool-c')) : undefined;
  console.log(`${rounds} rounds of ${checks} checks; a job with nothing spooled`);
  await measure('spool empty', { a, c });
  await leaveOthers(a);
  if (c) await leaveOthers(c);
  await measure(`spool holding ${others} parts of ${kib} KiB of other jobs of the same output`, { a, c });
} finally {
  await rm(dir, { recursive: true, force: true });
}
