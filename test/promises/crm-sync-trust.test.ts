/**
 * What a night of the CRM sync trusts, and what a CRM applying its files ends with. Adversarial: a state forged by
 * someone who can write the bucket (future times, negative counts, a time that is no time, each republished with the
 * metadata that proves it; a pointer to another schedule's state) is ignored, the night priced as a fresh state by
 * the sandbox's own ledger and no forged value in any file; a state inflating past its cap stops the night before it
 * pays; a night file mutated after the night is refused by the proof a job's part passes. And: twin ids (`A`, `A`,
 * `A#2`) over two unchanged nights make an empty `changes.csv`; a CRM applying `changes.csv` every morning equals
 * `rows.csv` in every column over three nights whose records move; records gone are named in `gone.csv` as the
 * export wrote them.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { pipeline } from 'node:stream/promises';
import { pathToFileURL } from 'node:url';
import { createGunzip, createGzip, gzipSync } from 'node:zlib';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLocalPart, publishFilePart } from '../../activities/run/part-files.ts';
import { readPart, zeroCounts } from '../../activities/run/parts.ts';
import { syncStateKey, syncStatePointerKey } from '../../activities/sync/layout.ts';
import { openStore } from '../../config/storage.ts';
import type { Store } from '../../connectors/storage/index.ts';
import { SyncManifestSchema } from '../../contract/manifest-schemas.ts';
import { verifyPart } from '../../loader/part-read.ts';
import { removeTempDirs, tempDir } from '../../testkit/drill-input.ts';
import { type JobEnv, startJobEnv } from '../../testkit/job-env.ts';
import { type ExportRecord, runSync, writeExport } from './crm-sync-helpers.ts';
import { chargedSince } from './oracle.ts';
import { DAY, FIRST_RUN_AT } from './push-helpers.ts';

const LIMIT = 5;
const MiB = 1024 * 1024;

describe('a night of the CRM sync trusts nothing planted and its files keep a CRM equal to rows.csv', () => {
  let env: JobEnv;
  let now = FIRST_RUN_AT;
  let dir: string;
  let output: string;
  let store: Store;

  beforeAll(async () => {
    env = await startJobEnv({ sandbox: { seed: 47, clock: () => now } });
    await env.startWorker();
    dir = await tempDir('crm-sync-trust');
    output = pathToFileURL(join(dir, 'out')).href;
    store = openStore(output);
  });
  afterAll(async () => {
    await env?.stop();
    await removeTempDirs();
  });

  const account = (i: number, tag: string): ExportRecord => ({
    id: `001${tag}${String(i).padStart(4, '0')}`,
    website: `trust-${tag.toLowerCase()}-${i}.com`,
    industry: 'Software',
  });
  /** What a fresh state pays tonight for these records: every company's full answer, capped, by the truth. */
  const freshIdeal = (records: readonly ExportRecord[]) =>
    env.sandbox.truth
      .companySignals([...new Set(records.map((r) => r.website))])
      .reduce((sum, t) => sum + (t.status === 'ok' ? 2 * Math.min(LIMIT, t.signals.length) : 0), 0);

  async function night(name: string, records: readonly ExportRecord[], at: number, exportDir = join(dir, name)) {
    now = at;
    const { mkdir } = await import('node:fs/promises');
    await mkdir(exportDir, { recursive: true });
    const input = await writeExport(exportDir, records);
    const mark = env.sandbox.truth.lastCall();
    const result = await runSync(env, `trust-${name}-${at}`, {
      name,
      kind: 'enrich',
      input,
      output,
      limit: LIMIT,
      keepColumns: ['Industry'],
      runAt: new Date(at).toISOString(),
    });
    return { result, charged: chargedSince(env.sandbox, mark) };
  }

  const readText = (url: string) => store.readText(url.slice(store.url.length + 1));
  const csvOf = async (url: string) => parse(await readText(url)) as string[][];

  /** Rewrites the committed state database of `name` with `forge`, republished with the metadata that proves it. */
  async function forgeState(name: string, forge: (db: DatabaseSync) => void) {
    const pointer = JSON.parse(await store.readText(syncStatePointerKey(name))) as { run_id: string; key: string };
    const local = join(dir, `${name}-forged.sqlite`);
    await pipeline(await store.openRead(pointer.key), createGunzip(), createWriteStream(local));
    const db = new DatabaseSync(local);
    forge(db);
    db.close();
    const file = openLocalPart(`${local}.gz`);
    await pipeline(createReadStream(local), createGzip(), file.stream);
    const proof = await file.finish();
    await publishFilePart(
      store,
      syncStateKey(name, pointer.run_id),
      { path: file.path, ...proof },
      {
        contentType: 'application/gzip',
        counts: zeroCounts(),
        identity: { owner: `${name}/_state`, options: `run-${pointer.run_id}`, index: 0 },
      },
    );
  }

  const forgeries: [string, (db: DatabaseSync) => void, string[]][] = [
    [
      'future',
      (db) => db.exec(`UPDATE companies SET through = '2999-01-01T00:00:00.000Z', counts = '{"funding":987654}'`),
      ['2999-', '987654'],
    ],
    ['negative', (db) => db.exec(`UPDATE companies SET counts = '{"funding":-7777}'`), ['-7777']],
    ['notime', (db) => db.exec(`UPDATE companies SET through = 'yesterday at noon'`), ['yesterday']],
  ];

  it.each(forgeries)(
    'a forged state (%s) is ignored: the night is priced as a fresh state and no forged value is in any file',
    async (tag, forge, forged) => {
      const name = `forged-${tag}`;
      const records = Array.from({ length: 12 }, (_, i) => account(i, tag.toUpperCase().slice(0, 3)));
      const first = await night(name, records, FIRST_RUN_AT + DAY);
      expect(first.charged).toBe(freshIdeal(records));
      expect(first.charged).toBeGreaterThan(0);
      await forgeState(name, forge);
      const at = FIRST_RUN_AT + 2 * DAY;
      now = at;
      const ideal = freshIdeal(records);
      const second = await night(name, records, at);
      expect(second.result.status).toBe('completed');
      expect(second.charged).toBe(ideal);
      const manifest = await readText(second.result.manifestUrl);
      const ignored = (JSON.parse(manifest) as { state: { ignored?: string } }).state.ignored;
      expect(ignored).toMatch(/companies row 1/);
      for (const text of [manifest, await readText(second.result.rowsUrl), await readText(second.result.changesUrl)]) {
        for (const value of forged) expect(text).not.toContain(value);
      }
    },
  );

  it("a pointer to another schedule's state (outside its own folder) is refused: the night is priced as a fresh state", async () => {
    const victim = Array.from({ length: 10 }, (_, i) => account(i, 'VIC'));
    await night('victim', victim, FIRST_RUN_AT + DAY);
    const records = Array.from({ length: 10 }, (_, i) => account(i, 'PLT'));
    await night('planted', records, FIRST_RUN_AT + DAY);
    const pointer = JSON.parse(await store.readText(syncStatePointerKey('planted'))) as Record<string, unknown>;
    const theirs = JSON.parse(await store.readText(syncStatePointerKey('victim'))) as { key: string };
    await store.writeText(syncStatePointerKey('planted'), JSON.stringify({ ...pointer, key: theirs.key }));
    const at = FIRST_RUN_AT + 2 * DAY;
    now = at;
    const ideal = freshIdeal(records);
    const second = await night('planted', records, at);
    expect(second.charged).toBe(ideal);
    const manifest = JSON.parse(await readText(second.result.manifestUrl)) as { state: { ignored?: string } };
    expect(manifest.state.ignored).toMatch(/key is not inside planted\/_state\//);
  });

  it('a state inflating past its cap stops the night before it pays, the worker far under idle + 500 MiB', async () => {
    const name = 'bomb';
    const records = Array.from({ length: 6 }, (_, i) => account(i, 'BMB'));
    await night(name, records, FIRST_RUN_AT + DAY);
    const pointer = JSON.parse(await store.readText(syncStatePointerKey(name))) as { run_id: string; key: string };
    // 1 GiB of zeros: about 1 MiB gzipped, proven by its metadata as a genuine state object would be.
    const bomb = join(dir, 'bomb.gz');
    const zeros = Buffer.alloc(16 * MiB);
    await writeFile(bomb, gzipSync(Buffer.concat(Array.from({ length: 4 }, () => zeros))));
    const file = openLocalPart(`${bomb}.part`);
    const chunk = await readFile(bomb);
    file.stream.end(Buffer.concat(Array.from({ length: 16 }, () => chunk)));
    const proof = await file.finish();
    await publishFilePart(
      store,
      pointer.key,
      { path: file.path, ...proof },
      {
        contentType: 'application/gzip',
        counts: zeroCounts(),
        identity: { owner: `${name}/_state`, options: `run-${pointer.run_id}`, index: 0 },
      },
    );
    const idle = process.memoryUsage.rss();
    const at = FIRST_RUN_AT + 2 * DAY;
    const failed = await night(name, records, at).catch((error: unknown) => error as Error);
    expect(failed).toBeInstanceOf(Error);
    expect(String((failed as Error & { cause?: { cause?: Error } }).cause?.cause?.message)).toMatch(/inflates past/);
    expect(chargedSince(env.sandbox, 0)).toBeGreaterThan(0);
    expect(process.resourceUsage().maxRSS * 1024).toBeLessThan(idle + 500 * MiB);
  });

  it('twin ids A, A and A#2 never share a key: two unchanged nights make an empty changes.csv', async () => {
    const base = { website: 'twins-co.com', industry: 'Software' };
    const records = [
      { id: 'A', ...base },
      { id: 'A', ...base, website: 'twins-other.com' },
      { id: 'A#2', ...base },
    ];
    await night('twins', records, FIRST_RUN_AT + DAY);
    const second = await night('twins', records, FIRST_RUN_AT + 2 * DAY);
    expect((await csvOf(second.result.changesUrl)).length).toBe(1);
    expect(second.result.records).toMatchObject({ total: 3, unchanged: 3, changed: 0, new: 0, gone: 0 });
    const third = await night('twins', records, FIRST_RUN_AT + 3 * DAY);
    expect((await csvOf(third.result.changesUrl)).length).toBe(1);
  });

  it('a CRM applying changes.csv every morning equals rows.csv in every column, night after night; gone.csv names the gone records as the export wrote them', async () => {
    const records = Array.from({ length: 20 }, (_, i) => account(i, 'CRM'));
    const nights = [
      records,
      // A record inserted at the top (every position below it moves), two gone, one edited.
      [{ ...account(99, 'CRM'), id: '001CRM00099' }, ...records.slice(0, 15), { ...records[16]!, industry: 'Fintech' }],
      // The order reversed; one more gone.
      [...records.slice(1, 15)].reverse(),
    ];
    const crm = new Map<string, string[]>();
    let header: string[] = [];
    let previousIds = new Set<string>();
    for (const [n, tonight] of nights.entries()) {
      const { result } = await night('crm', tonight, FIRST_RUN_AT + (n + 1) * DAY);
      const [rowsHeader, ...rows] = await csvOf(result.rowsUrl);
      const [changesHeader, ...changes] = await csvOf(result.changesUrl);
      header = rowsHeader!;
      expect(changesHeader).toEqual(header);
      expect(header).not.toContain('Signal_Row__c');
      for (const row of changes) crm.set(row[0]!, row);
      const [goneHeader, ...gone] = await csvOf(result.goneUrl);
      expect(goneHeader).toEqual(['Id']);
      const ids = new Set(tonight.map((r) => r.id));
      expect(gone.map((g) => g[0]).sort()).toEqual([...previousIds].filter((id) => !ids.has(id)).sort());
      for (const [id] of gone) crm.delete(id!);
      // The manifest names gone.csv, proven as its parts are, and is the contract's.
      const manifest = SyncManifestSchema.parse(JSON.parse(await readText(result.manifestUrl)));
      expect(manifest.gone).toMatchObject({ lines: gone.length });
      // ids.csv (named by the manifest, never its ids): each changed or new record of changes.csv, each gone one.
      const [idsHeader, ...idLines] = await csvOf(new URL('ids.csv', result.manifestUrl).href);
      expect(idsHeader).toEqual(['Id', 'change']);
      expect(manifest.records.ids).toMatchObject({ lines: changes.length + gone.length });
      expect(manifest.records).not.toHaveProperty('gone_ids');
      const idsOf = (which: string) => idLines.filter((line) => line[1] === which).map((line) => line[0]);
      expect(idsOf('gone').sort()).toEqual(gone.map((g) => g[0]).sort());
      expect([...idsOf('new'), ...idsOf('changed')].sort()).toEqual(changes.map((c) => c[0]).sort());
      expect(idsOf('new')).toHaveLength(manifest.records.new);
      // The CRM's records, after the morning's import, equal rows.csv in every column.
      expect(new Map(rows.map((row) => [row[0]!, row]))).toEqual(crm);
      previousIds = ids;
      if (n === 1) expect(changes.length).toBeLessThan(tonight.length);
    }
  });

  it("a night file mutated after the night is refused by the proof a job's part passes", async () => {
    const records = Array.from({ length: 5 }, (_, i) => account(i, 'MUT'));
    const { result } = await night('mutated', records, FIRST_RUN_AT + DAY);
    const manifest = JSON.parse(await readText(result.manifestUrl)) as {
      parts: { key: string; lines: number; bytes: number; sha256: string; table: 'rows'; format: 'csv' }[];
    };
    const part = manifest.parts.find((p) => p.key.endsWith('/rows.csv'))!;
    const identity = { owner: `mutated/run-${result.runId}`, options: '', index: 0 };
    expect((await readPart(store, part.key, identity)).part?.sha256).toBe(part.sha256);
    await verifyPart(store, part);
    const text = await store.readText(part.key);
    const info = (await store.stat(part.key))!;
    // The same size, one byte changed, the metadata kept: only the sha256 tells.
    const mutated = text.replace('Software', 'Softwarf');
    await store.writeText(part.key, mutated, { metadata: info.metadata });
    expect((await readPart(store, part.key, identity)).distrusted).toMatch(/sha256/);
    await expect(verifyPart(store, part)).rejects.toThrow(/sha256/);
  });
});
