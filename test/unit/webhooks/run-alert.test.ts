/** A schedule's alert body: Standard Webhooks' event, or Slack's text for a Slack incoming webhook (issue 36.8). */
import { MockAgent } from 'undici';
import { describe, expect, it } from 'vitest';
import { isSlackWebhook, notifyRunOutcome, type RunAlert } from '../../../activities/run-alert.ts';
import { deliveryContext } from '../../../activities/webhook-delivery.ts';
import { openStore } from '../../../config/storage.ts';

const alert: RunAlert = {
  url: 'https://hooks.slack.com/services/T000/B000/XXXX',
  schedule: 'crm-nightly',
  kind: 'enrich',
  runId: '20260301T013000Z',
  status: 'budget_exhausted',
  reason: 'the run stopped on its credit budget (--max-credits); the next run carries on',
  counts: { total: 304, new: 12 },
  credits: 5000,
  files: { manifest: 's3://revops/crm-nightly/_manifest.json' },
};

describe('run alerts', () => {
  it('tells a Slack incoming webhook by its path shape', () => {
    expect(isSlackWebhook(alert.url)).toBe(true);
    expect(isSlackWebhook('https://hooks.slack.com/workflows/T000/xyz')).toBe(false);
    expect(isSlackWebhook('https://example.com/services/T000')).toBe(false);
  });

  it("posts Slack's text form to a Slack webhook: the schedule, how it ended, why, the counts and the files", async () => {
    const agent = new MockAgent();
    agent.disableNetConnect();
    let posted: unknown;
    agent
      .get('https://hooks.slack.com')
      .intercept({ path: '/services/T000/B000/XXXX', method: 'POST' })
      .reply(200, (request) => {
        posted = JSON.parse(String(request.body));
        return 'ok';
      });
    const ctx = deliveryContext({
      config: { destinations: [], deadLetterUrl: 'file:///tmp/unused', allowlist: [] },
      openStore,
      dispatcher: agent,
    });
    expect(await notifyRunOutcome(ctx, alert)).toEqual({ status: 200 });
    expect(Object.keys(posted as object)).toEqual(['text']);
    const text = (posted as { text: string }).text;
    for (const part of ['crm-nightly', 'stopped on its credit budget', '--max-credits', '"total":304', '5000'])
      expect(text).toContain(part);
    expect(text).toContain('s3://revops/crm-nightly/_manifest.json');
  });

  it('refuses to post an unsigned event to another endpoint: the worker has no SIGNAL_KIT_NOTIFY_SECRET', async () => {
    const ctx = deliveryContext({
      config: { destinations: [], deadLetterUrl: 'file:///tmp/unused', allowlist: [] },
      openStore,
    });
    await expect(notifyRunOutcome(ctx, { ...alert, url: 'https://alerts.example.com/x' })).rejects.toThrow(
      /SIGNAL_KIT_NOTIFY_SECRET/,
    );
  });
});
