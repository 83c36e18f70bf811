/** Intent export from submit to download, with the sandbox clock moved by the test. */
import { text } from 'node:stream/consumers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NotFoundError } from '../../connectors/signal-api/index.ts';
import { client, movableClock, type Sandbox, sandbox, T0, type TestClient } from './helpers.ts';

const clock = movableClock(T0);
const timing = { queuedMs: 10_000, runningMs: 20_000, linkTtlMs: 60_000, jobTtlMs: 3_600_000 };
let sb: Sandbox;
let c: TestClient;

beforeAll(async () => {
  sb = await sandbox({ clock, exportTiming: timing });
  c = client(sb);
});

afterAll(async () => {
  await c?.close();
  await sb?.stop();
});

describe('intent export', () => {
  it('submit → queued → running → ready → download → link expiry → job expiry', async () => {
    const topics = ['b2b_11', 'b2b_12'];
    const job = await c.createIntentExport({ topic_ids: topics, email_validated: false });
    expect(job.export_id).toMatch(/^exp_[0-9a-f]+$/);
    expect(job.status).toBe('queued');
    expect(job.created_at).toBe(new Date(T0).toISOString());
    expect(job.credits).toBe(25 * topics.length);

    expect((await c.getIntentExport(job.export_id)).status).toBe('queued');
    clock.advance(timing.queuedMs + 1);
    const running = await c.getIntentExport(job.export_id);
    expect(running.status).toBe('running');
    expect(running.download_url).toBeUndefined();
    clock.advance(timing.runningMs);
    const ready = await c.getIntentExport(job.export_id);
    expect(ready.status).toBe('ready');
    expect(ready.download_url).toMatch(/\/downloads\/exports\/exp_[0-9a-f]+\.jsonl\?expires=\d+&sig=[0-9a-f]+$/);
    expect(ready.row_count).toBeGreaterThan(0);
    expect(ready.credits).toBe(0);

    const d = await c.downloadIntentExport(ready);
    expect(d.contentLength).toBeGreaterThan(0);
    expect(d.credits).toBe(0);
    const body = await text(d.body);
    expect(Buffer.byteLength(body)).toBe(d.contentLength);
    const lines = body.split('\n').filter(Boolean);
    expect(lines).toHaveLength(ready.row_count!);
    for (const line of lines) {
      const item = JSON.parse(line) as { topic_id: string; intent_score: number; contact: object; company: object };
      expect(topics).toContain(item.topic_id);
      expect(typeof item.intent_score).toBe('number');
      expect(item.contact).toBeTypeOf('object');
    }

    // by export id, and resumed from a byte offset
    const byId = await c.downloadIntentExport(job.export_id, { offset: 100 });
    expect(byId.offset).toBe(100);
    expect(await text(byId.body)).toBe(body.slice(100));

    clock.advance(timing.linkTtlMs + 1);
    const err = await c.downloadIntentExport(ready.download_url!).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NotFoundError);
    expect([(err as NotFoundError).status, (err as NotFoundError).code]).toEqual([410, 'gone']);

    clock.advance(timing.jobTtlMs);
    expect((await c.getIntentExport(job.export_id)).status).toBe('expired');
  });

  it('a tampered link is refused (403), an unknown job is NotFoundError', async () => {
    const job = await c.createIntentExport({ topic_ids: ['b2b_13'] });
    clock.advance(timing.queuedMs + timing.runningMs + 1);
    const ready = await c.getIntentExport(job.export_id);
    const tampered = ready.download_url!.replace(/sig=([0-9a-f])/, (_m, ch: string) => `sig=${ch === '0' ? '1' : '0'}`);
    await expect(c.downloadIntentExport(tampered)).rejects.toMatchObject({ name: 'AuthenticationError', status: 403 });
    await expect(c.getIntentExport('exp_0000')).rejects.toMatchObject({ name: 'NotFoundError' });
  });

  it('topic ids outside the catalog are 422', async () => {
    await expect(c.createIntentExport({ topic_ids: ['b2b_99999999'] })).rejects.toMatchObject({
      name: 'ValidationError',
      status: 422,
    });
  });
});
