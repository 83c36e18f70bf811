/**
 * One side of bench/writeback-ledger.ts in its own process: a write-back ledger of `--records` confirmed records
 * built, published, read back and published again, as two nights do; `--form database` (the kit's: a database on
 * disk, looked up by id, `activities/writeback/ledger.ts`) or `--form json` (the release before: one JSON document,
 * built, proven by its sha256, written, read and parsed whole). Prints one JSON line: peak heap over its start, max
 * RSS, bytes stored, and whether a sample of records read back equal.
 */
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { closeLedger, readLedger, writeLedger } from '../../activities/writeback/ledger.ts';
import { openStoreWith, type Store } from '../../connectors/storage/index.ts';

const { values: args } = parseArgs({ options: { records: { type: 'string' }, form: { type: 'string' } } });
const records = Number(args.records);
const idOf = (i: number) => `001${String(i).padStart(12, '0')}`;
const valuesOf = (i: number) => ({
  Signal_Status__c: 'ok',
  Signal_Count__c: i % 97,
  Signal_Latest_Signal_At__c: '2026-11-01T10:00:00.000Z',
  Signal_Latest_Signal_Type__c: 'hiring',
  Signal_Latest_Signal_Summary__c: `Company ${i} is hiring engineers in three offices`,
});
const SAMPLE = [0, 1, Math.floor(records / 2), records - 1];
const base = process.memoryUsage().heapUsed;
let peak = base;
/** The heap now, kept when it is the highest (also called between the steps that run without yielding). */
const sample = () => {
  peak = Math.max(peak, process.memoryUsage().heapUsed);
};

async function database(store: Store): Promise<boolean> {
  let ledger = await readLedger(store, 'nightly');
  for (let at = 0; at < records; at += 50_000) {
    ledger.records.transaction(() => {
      for (let i = at; i < Math.min(records, at + 50_000); i++) ledger.records.confirm(idOf(i), valuesOf(i));
    });
    sample();
  }
  await writeLedger(store, ledger);
  await closeLedger(ledger);
  sample();
  ledger = await readLedger(store, 'nightly');
  sample();
  ledger.records.setPending(idOf(7), { values: valuesOf(8), from: '20261202T020000Z' });
  const equal = SAMPLE.every((i) => JSON.stringify(ledger.records.confirmed(idOf(i))) === JSON.stringify(valuesOf(i)));
  await writeLedger(store, ledger);
  await closeLedger(ledger);
  return equal;
}

async function json(store: Store): Promise<boolean> {
  const key = 'nightly/_writeback.json';
  const ledger = { name: 'nightly', confirmed: {} as Record<string, unknown>, pending: {}, refused: {}, nights: {} };
  for (let i = 0; i < records; i++) ledger.confirmed[idOf(i)] = valuesOf(i);
  sample();
  const proof = (l: unknown) => createHash('sha256').update(JSON.stringify(l)).digest('hex');
  await store.writeText(key, JSON.stringify({ version: 1, sha256: proof(ledger), ledger }));
  sample();
  const back = JSON.parse(await store.readText(key)) as { sha256: string; ledger: typeof ledger };
  sample();
  const equal =
    back.sha256 === proof(back.ledger) &&
    SAMPLE.every((i) => JSON.stringify(back.ledger.confirmed[idOf(i)]) === JSON.stringify(valuesOf(i)));
  await store.writeText(key, JSON.stringify({ version: 1, sha256: proof(back.ledger), ledger: back.ledger }));
  return equal;
}

const dir = await mkdtemp(join(tmpdir(), 'ledger-bench-'));
const store = openStoreWith(`file://${dir}`, () => {
  throw new Error('no bucket in this benchmark');
});
const sampler = setInterval(sample, 10);
const started = performance.now();
const equal = args.form === 'database' ? await database(store) : await json(store);
const ms = performance.now() - started;
clearInterval(sampler);
sample();
let storedBytes = 0;
for await (const object of store.list('nightly/')) storedBytes += object.size;
await rm(dir, { recursive: true, force: true });
const report = {
  peakHeapKb: Math.round((peak - base) / 1024),
  maxRssKb: process.resourceUsage().maxRSS,
  storedBytes,
  ms,
  equal,
};
console.log(JSON.stringify(report));
