/** `signal-kit schedule create --kind …` then `schedule run --wait` against a real Temporal server and the sandbox. */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { FeedManifest, FeedResult } from '../../activities/feeds/types.ts';
import { runScheduleCommand } from '../../cli/commands/schedule.ts';
import { parseScheduleArgv } from '../../cli/program.ts';
import { openStore } from '../../config/storage.ts';
import { useScheduleEnv } from '../helpers/schedule-cli.ts';

describe('signal-kit schedule with a feed kind', () => {
  const { ctx, cli } = useScheduleEnv('feed-schedule');

  it('creates an intent-contacts feed, runs it now and again (nothing new the second time), and refuses a backfill', async () => {
    const { env, dir } = ctx;
    const output = pathToFileURL(join(dir, 'out')).href;
    const created = await cli(
      'create',
      ...['--name', 'intent-daily', '--kind', 'intent-contacts', '--topics', 'b2b_17,b2b_18', '--email-validated'],
      ...['--output', output, '--every', '1d', '--paused'],
    );
    expect(created).toEqual({ code: 0, out: expect.objectContaining({ name: 'intent-daily', created: true }) });
    const described = await cli<{ push: Record<string, unknown> }>('describe', 'intent-daily');
    expect(described.out.push).toMatchObject({
      kind: 'intent-contacts',
      filters: { topic_ids: ['b2b_17', 'b2b_18'], email_validated: true },
    });

    const first = await cli<FeedResult>('run', 'intent-daily', '--wait');
    expect(first.code).toBe(0);
    expect(first.out).toMatchObject({ kind: 'intent-contacts', status: 'completed' });
    const truth = env.sandbox.truth.intentContacts({ topic_ids: ['b2b_17', 'b2b_18'], email_validated: true });
    expect(first.out.new).toBe(truth.length);
    const manifest = JSON.parse(
      await openStore(first.out.manifestUrl.replace(/\/[^/]+$/, '')).readText('_manifest.json'),
    ) as FeedManifest;
    expect(manifest).toMatchObject({
      kind: 'intent-contacts',
      counts: { new: truth.length },
      credits_charged: truth.length,
    });

    const second = await cli<FeedResult>('run', 'intent-daily', '--wait');
    expect(second.out).toMatchObject({ status: 'completed', new: 0, credits: truth.length });

    const backfill = parseScheduleArgv(['backfill', 'intent-daily', '--from', '2026-01-01', '--to', '2026-02-01']);
    await expect(
      runScheduleCommand(backfill.sub, backfill.name, backfill.flags, {
        client: env.client,
        temporal: env.config(),
        print: () => {},
      }),
    ).rejects.toThrow(/has no backfill/);
    expect((await cli('delete', 'intent-daily')).code).toBe(0);
  });
});
