/**
 * A schedule's alerts (issue 36.8): `--notify <url>` posts one Standard Webhooks event for a night that fails,
 * through the kit's delivery with retries, signed with the worker's SIGNAL_KIT_NOTIFY_SECRET (never in history), and
 * verified here by the official `standardwebhooks` library on a 127.0.0.1 endpoint; a push and a feed stopped on
 * their budget post the same event.
 */
import { randomBytes } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import type { IncomingHttpHeaders } from 'node:http';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Webhook } from 'standardwebhooks';
import { afterAll, describe, expect, it } from 'vitest';
import { type Recorder, startRecorder } from '../helpers/http-endpoint.ts';
import { useScheduleEnv } from '../helpers/schedule-cli.ts';
import { writeExport } from '../promises/crm-sync-helpers.ts';

const secret = `whsec_${randomBytes(24).toString('base64')}`;
// The worker of this file reads its configuration from the environment when it starts.
process.env['SIGNAL_KIT_NOTIFY_SECRET'] = secret;
process.env['SIGNAL_KIT_WEBHOOK_ALLOWLIST'] = '127.0.0.1/32';

const records = Array.from({ length: 3 }, (_, i) => ({
  id: `0015g00000${String(i).padStart(3, '0')}`,
  website: `https://www.alert-co${i}.com`,
  industry: 'Retail',
}));

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  status: number;
}

describe('a failed night tells someone', () => {
  const { ctx, cli, createNightly } = useScheduleEnv('schedule-alerts');
  let endpoint: Recorder<Received> | undefined;
  afterAll(async () => endpoint?.close());

  it('posts one signed event with the reason, the counts and the files, retried until the endpoint takes it', async () => {
    endpoint = await startRecorder<Received>(
      '/hooks/signal-kit',
      { what: 'alerts', waitTimeoutMs: 120_000, pollMs: 100 },
      (req, body, status) => ({ headers: req.headers, body, status }),
    );
    // The endpoint is down for the first attempt: the kit's delivery tries again.
    endpoint.answer = (n) => (n === 0 ? 503 : 200);
    const input = await writeExport(ctx.dir, records);
    const output = pathToFileURL(join(ctx.dir, 'out')).href;
    const created = await createNightly('alerting', { input, output, flags: ['--notify', endpoint.url] });
    expect(created.code).toBe(0);
    const described = await cli<{ push: Record<string, unknown> }>('describe', 'alerting');
    expect(described.out.push).toMatchObject({ notify: endpoint.url });
    expect(JSON.stringify(described.out)).not.toContain(secret);

    // Tonight's export has lost its website column.
    await writeFile(join(ctx.dir, 'accounts.csv'), 'Id,Owner\n001,Ann\n');
    const night = await cli<{ error: string }>('run', 'alerting', '--wait');
    expect(night.code).toBe(1);

    const received = await endpoint.waitFor(2);
    expect(received.map((r) => r.status)).toEqual([503, 200]);
    const [first, delivered] = received as [Received, Received];
    // One event: the retry carries the same webhook id, so a receiver drops a repeat.
    expect(delivered.headers['webhook-id']).toBe(first.headers['webhook-id']);
    const event = new Webhook(secret).verify(delivered.body, {
      'webhook-id': String(delivered.headers['webhook-id']),
      'webhook-timestamp': String(delivered.headers['webhook-timestamp']),
      'webhook-signature': String(delivered.headers['webhook-signature']),
    }) as { type: string; data: Record<string, unknown> };
    expect(event.type).toBe('signal_kit.run.failed');
    expect(event.data).toMatchObject({ schedule: 'alerting', kind: 'enrich', status: 'failed' });
    expect(event.data['reason']).toMatch(/accounts\.csv: no column of the input holds a domain or website/);
    expect(event.data['reason']).toBe(night.out.error);
    expect(() =>
      new Webhook(`whsec_${randomBytes(24).toString('base64')}`).verify(delivered.body, {
        'webhook-id': String(delivered.headers['webhook-id']),
        'webhook-timestamp': String(delivered.headers['webhook-timestamp']),
        'webhook-signature': String(delivered.headers['webhook-signature']),
      }),
    ).toThrow();

    // The secret is the worker's: nowhere in the night's history.
    const history = await ctx.env.client.workflow.getHandle('signal-kit-sync-alerting/manual-run').fetchHistory();
    expect(JSON.stringify(history)).not.toContain(secret.slice('whsec_'.length));

    // A night that completes says nothing.
    await writeExport(ctx.dir, records);
    expect((await cli('run', 'alerting', '--wait')).code).toBe(0);
    expect(endpoint.items).toHaveLength(2);
  }, 180_000);

  /** A fresh endpoint that takes every event, and the one event it received, verified with the official library. */
  async function oneEvent(path: string, start: (url: string) => Promise<void>) {
    const recorder = await startRecorder<Received>(
      path,
      { what: 'alerts', waitTimeoutMs: 120_000, pollMs: 100 },
      (req, body, status) => ({ headers: req.headers, body, status }),
    );
    try {
      await start(recorder.url);
      const [received] = (await recorder.waitFor(1)) as [Received];
      const event = new Webhook(secret).verify(received.body, {
        'webhook-id': String(received.headers['webhook-id']),
        'webhook-timestamp': String(received.headers['webhook-timestamp']),
        'webhook-signature': String(received.headers['webhook-signature']),
      }) as { type: string; data: Record<string, unknown> };
      return { event, count: () => recorder.items.length };
    } finally {
      await recorder.close();
    }
  }

  it('a push stopped on its budget posts the same signed event', async () => {
    const watchlist = join(ctx.dir, 'watchlist.csv');
    await writeFile(watchlist, 'domain\nalert-push0.com\nalert-push1.com\nalert-push2.com\n');
    const output = pathToFileURL(join(ctx.dir, 'push-out')).href;
    const { event } = await oneEvent('/hooks/push', async (url) => {
      const created = await cli(
        ...['create', '--name', 'push-alerting', '--watchlist', pathToFileURL(watchlist).href, '--output', output],
        ...['--every', '1d', '--paused', '--max-credits', '1', '--notify', url],
      );
      expect(created.code).toBe(0);
      const run = await cli<{ status: string }>('run', 'push-alerting', '--wait');
      expect(run.out.status).toBe('budget_exhausted');
    });
    expect(event.type).toBe('signal_kit.run.budget_exhausted');
    expect(event.data).toMatchObject({
      schedule: 'push-alerting',
      kind: 'push',
      status: 'budget_exhausted',
      // A budget of 1 credit buys no bulk call: nothing asked, nothing charged.
      counts: { signals: 0 },
      credits: 0,
      files: { manifest: expect.stringMatching(/_manifest\.json$/) },
    });
    expect(event.data['reason']).toMatch(/--max-credits/);
  }, 180_000);

  it('a push whose watchlist is gone fails and posts the same signed event, saying why', async () => {
    const watchlist = join(ctx.dir, 'gone-watchlist.csv');
    await writeFile(watchlist, 'domain\nalert-push0.com\n');
    const output = pathToFileURL(join(ctx.dir, 'push-failing-out')).href;
    const { event } = await oneEvent('/hooks/push-failing', async (url) => {
      const created = await cli(
        ...['create', '--name', 'push-failing', '--watchlist', pathToFileURL(watchlist).href, '--output', output],
        ...['--every', '1d', '--paused', '--notify', url],
      );
      expect(created.code).toBe(0);
      await rm(watchlist);
      const run = await cli<{ error: string }>('run', 'push-failing', '--wait');
      expect(run.code).toBe(1);
    });
    expect(event.type).toBe('signal_kit.run.failed');
    expect(event.data).toMatchObject({ schedule: 'push-failing', kind: 'push', status: 'failed' });
    expect(event.data['reason']).toMatch(/gone-watchlist\.csv/);
  }, 180_000);

  it('a feed stopped on its budget posts the same signed event', async () => {
    const output = pathToFileURL(join(ctx.dir, 'feed-out')).href;
    const { event } = await oneEvent('/hooks/feed', async (url) => {
      const created = await cli(
        ...['create', '--name', 'feed-alerting', '--kind', 'intent-contacts', '--topics', 'b2b_17'],
        ...['--output', output, '--every', '1d', '--paused', '--max-credits', '1', '--notify', url],
      );
      expect(created.code).toBe(0);
      await cli('run', 'feed-alerting', '--wait');
    });
    expect(event.type).toBe('signal_kit.run.budget_exhausted');
    expect(event.data).toMatchObject({
      schedule: 'feed-alerting',
      kind: 'intent-contacts',
      status: 'budget_exhausted',
      counts: { new: 0, incompleteBy: { budget: 1 } },
      credits: 0,
      files: { manifest: expect.stringMatching(/_manifest\.json$/) },
    });
  }, 180_000);
});
