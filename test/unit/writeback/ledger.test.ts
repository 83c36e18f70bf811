/**
 * The write-back ledger as stored: a database published under its sha256 and a pointer of constant size, whatever the
 * number of records; a ledger of the release before (one JSON document) read and carried in; a database that does
 * not prove itself (its sha256, its schedule, its place) refused by name.
 */
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  closeLedger,
  ledgerKey,
  readLedger,
  writeBackState,
  writeLedger,
} from '../../../activities/writeback/ledger.ts';
import { openStoreWith, type Store } from '../../../connectors/storage/index.ts';
import { readAll, writeBody } from '../../../connectors/storage/store-io.ts';

let dir: string;
let store: Store;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'signal-kit-ledger-test-'));
  store = openStoreWith(`file://${dir}`, () => {
    throw new Error('no bucket here');
  });
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const night = (runId: string, written: number) => ({
  crm: 'salesforce' as const,
  object: 'Account' as const,
  written,
  rejected: 1,
  transient: 0,
  notAttempted: 0,
  carried: 0,
  kept: 0,
  truncated: 0,
  pending: 1,
  reportUrl: `file:///x/${runId}/writeback.csv`,
});

describe('the write-back ledger', () => {
  it('reads a version 1 ledger (one JSON document) and carries every record of it into the database', async () => {
    // What the release before wrote: its sha256 over JSON.stringify(ledger).
    const legacy = {
      name: 'nightly',
      confirmed: { '001A': { Signal_Count__c: 3 }, '001B': { Signal_Count__c: 1, Signal_Status__c: 'ok' } },
      pending: { '001C': { values: { Signal_Count__c: 7 }, from: '20261201T020000Z' } },
      refused: { '001D': { print: 'p', code: 'ENTITY_IS_DELETED', message: 'deleted', run: '20261201T020000Z' } },
      nights: { '20261201T020000Z': night('20261201T020000Z', 2) },
    };
    const sha256 = createHash('sha256').update(JSON.stringify(legacy)).digest('hex');
    await store.writeText(ledgerKey('nightly'), JSON.stringify({ version: 1, sha256, ledger: legacy }));
    expect(await writeBackState(store, 'nightly')).toMatchObject({ pending: 1, refused: 1, confirmed: 2 });

    const ledger = await readLedger(store, 'nightly');
    expect(ledger.records.confirmed('001B')).toEqual({ Signal_Count__c: 1, Signal_Status__c: 'ok' });
    expect(ledger.records.pending('001C')).toEqual({ values: { Signal_Count__c: 7 }, from: '20261201T020000Z' });
    expect(ledger.records.refused('001D')).toMatchObject({ code: 'ENTITY_IS_DELETED' });
    expect(Object.keys(ledger.nights)).toEqual(['20261201T020000Z']);
    await writeLedger(store, ledger);
    await closeLedger(ledger);

    const again = await readLedger(store, 'nightly');
    expect(again.records.confirmed('001A')).toEqual({ Signal_Count__c: 3 });
    expect([...again.records.allPending()].map(([id]) => id)).toEqual(['001C']);
    expect(again.nights['20261201T020000Z']).toMatchObject({ written: 2 });
    await closeLedger(again);
    expect(JSON.parse(await store.readText(ledgerKey('nightly')))).toMatchObject({ version: 2, name: 'nightly' });
    expect(await writeBackState(store, 'nightly')).toMatchObject({
      pending: 1,
      refused: 1,
      confirmed: 2,
      lastNight: { runId: '20261201T020000Z', written: 2 },
    });
  });

  it('keeps its pointer the same size however many records it holds, and only the last database', async () => {
    const sizes: number[] = [];
    for (const records of [10, 20_000]) {
      const ledger = await readLedger(store, 'nightly');
      ledger.records.transaction(() => {
        for (let i = 0; i < records; i++)
          ledger.records.confirm(`001${i}`, { Signal_Count__c: i, Signal_Status__c: 'ok' });
      });
      await writeLedger(store, ledger);
      await closeLedger(ledger);
      sizes.push(Buffer.byteLength(await store.readText(ledgerKey('nightly'))));
    }
    expect(Math.abs((sizes[1] as number) - (sizes[0] as number))).toBeLessThan(16);
    expect(await writeBackState(store, 'nightly')).toMatchObject({ confirmed: 20_000 });
    const listed: string[] = [];
    for await (const info of store.list('nightly/_writeback/')) listed.push(info.key);
    expect(listed).toHaveLength(1);
  });

  it('refuses a database whose bytes, schedule or place do not prove it, naming the ledger', async () => {
    const saved = async (count: number) => {
      const ledger = await readLedger(store, 'nightly');
      ledger.records.confirm('001A', { Signal_Count__c: count });
      await writeLedger(store, ledger);
      await closeLedger(ledger);
      return JSON.parse(await store.readText(ledgerKey('nightly'))) as { key: string; name: string };
    };
    const first = await saved(1);
    const older = await readAll(await store.openRead(first.key));
    const pointer = await saved(2);
    // A database of the same schedule, whole and valid, but not the one the pointer names (an older copy put back).
    await writeBody(store, pointer.key, older);
    await expect(readLedger(store, 'nightly')).rejects.toThrow(/does not match its sha256/);

    await store.writeText(ledgerKey('other'), JSON.stringify(pointer));
    await expect(readLedger(store, 'other')).rejects.toThrow(/belongs to schedule "nightly", not "other"/);
    await store.writeText(ledgerKey('nightly'), JSON.stringify({ ...pointer, key: 'elsewhere/x.sqlite.gz' }));
    await expect(readLedger(store, 'nightly')).rejects.toThrow(/outside the schedule's ledger folder/);
    expect(await writeBackState(store, 'other')).toMatchObject({ unreadable: expect.stringMatching(/nightly/) });
  });
});
