/**
 * `schedule state` and `describe` of a CRM sync show its last night as the manifest says it (counts, files), read
 * through the contract's checked reader and place rule: a manifest planted in the schedule's folder (a real night's
 * copied to a newer folder, one forged to lie in its folder but naming another night's files, one that is no
 * manifest) is never shown as the last night; it is named with the reason, and the real night is shown.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../config/storage.ts';
import type { Store } from '../../connectors/storage/index.ts';
import { SCHEDULE_KINDS } from '../../library/schedules/kinds.ts';
import type { SyncNightView } from '../../library/schedules/sync-night.ts';
import { removeTempDirs, tempDir } from '../../testkit/drill-input.ts';
import { type JobEnv, startJobEnv } from '../../testkit/job-env.ts';
import { runSync, writeExport } from './crm-sync-helpers.ts';
import { FIRST_RUN_AT } from './push-helpers.ts';

const NAME = 'seen';

describe("a sync schedule's state shows its last night, never a manifest planted beside it", () => {
  let env: JobEnv;
  let output: string;
  let store: Store;
  let night: { runId: string; manifestUrl: string };

  beforeAll(async () => {
    env = await startJobEnv({ sandbox: { seed: 53, clock: () => FIRST_RUN_AT } });
    await env.startWorker();
    const dir = await tempDir('crm-sync-state-view');
    output = pathToFileURL(join(dir, 'out')).href;
    store = openStore(output);
    const records = [1, 2, 3].map((i) => ({ id: `001SEEN${i}`, website: `seen-${i}.com`, industry: 'Software' }));
    const input = await writeExport(dir, records);
    night = await runSync(env, 'state-view-night-1', {
      name: NAME,
      kind: 'enrich',
      input,
      output,
      limit: 5,
      runAt: new Date(FIRST_RUN_AT).toISOString(),
    });
  });
  afterAll(async () => {
    await env?.stop();
    await removeTempDirs();
  });

  const keyOf = (url: string) => url.slice(store.url.length + 1);
  const view = () => SCHEDULE_KINDS.enrich.state.view(output, NAME, {});
  const expectTheRealNight = (lastNight: unknown) => {
    const shown = lastNight as SyncNightView;
    expect(shown.manifest).toBe(night.manifestUrl);
    expect(shown.run_id).toBe(night.runId);
    expect(shown.records).toEqual({ total: 3, new: 3, changed: 0, unchanged: 0, gone: 0 });
    expect(shown.files.some((file) => file.endsWith(`/run-${night.runId}/rows.csv`))).toBe(true);
    expect(shown.files.every((file) => file.startsWith(night.manifestUrl.replace(/_manifest\.json$/, '')))).toBe(true);
  };

  it("shows the night's manifest: its records, credits and files", async () => {
    const shown = await view();
    expectTheRealNight(shown['lastNight']);
    expect(shown['ignoredManifests']).toEqual([]);
    expect((shown['lastRun'] as { run_id: string }).run_id).toBe(night.runId);
  });

  it('names a planted manifest with the reason and shows the real night, in state and in describe', async () => {
    const real = await store.readText(keyOf(night.manifestUrl));
    const manifest = JSON.parse(real) as Record<string, unknown> & { parts: { key: string }[] };
    // The real night's manifest copied to a newer night's folder: its run_id names another folder.
    const copied = `${NAME}/runs/dt=2099-01-01/run-20990101T000000Z/_manifest.json`;
    await store.writeText(copied, real);
    // A forged one lying where its ids put it, but naming the real night's files as its own.
    const forgedId = '20990102T000000Z';
    const forged = `${NAME}/runs/dt=2099-01-02/run-${forgedId}/_manifest.json`;
    await store.writeText(
      forged,
      JSON.stringify({ ...manifest, run_id: forgedId, dt: '2099-01-02', scheduled_at: '2099-01-02T00:00:00.000Z' }),
    );
    // Not a manifest at all.
    const junk = `${NAME}/runs/dt=2099-01-03/run-20990103T000000Z/_manifest.json`;
    await store.writeText(junk, '{"kind": "crm-sync"');

    const shown = await view();
    expectTheRealNight(shown['lastNight']);
    const ignored = shown['ignoredManifests'] as { manifest: string; reason: string }[];
    expect(ignored.map((entry) => keyOf(entry.manifest))).toEqual([junk, forged, copied]);
    expect(ignored[0]?.reason).toBe('not JSON');
    expect(ignored[1]?.reason).toMatch(/^not in its own place: .*parts\.0\.key/);
    expect(ignored[2]?.reason).toMatch(/^not in its own place: .*run_id/);

    const described = (await SCHEDULE_KINDS.enrich.state.lastRun(output, NAME)) as Record<string, unknown>;
    expect(described['run_id']).toBe(night.runId);
    expectTheRealNight(described['lastNight']);
    expect(described['ignoredManifests']).toEqual(ignored);
  });
});
