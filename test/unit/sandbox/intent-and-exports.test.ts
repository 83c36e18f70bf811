import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { EXPORT_LINE_WIDTH } from '../../../sandbox/data/intent.ts';
import { parseRange } from '../../../sandbox/exports.ts';
import type { Sandbox } from '../../../sandbox/index.ts';
import { call, charged, type Json, movableClock, startStoppedAfterEach, T0 } from './helpers.ts';

const start = startStoppedAfterEach();

describe('buyer-intent contacts', () => {
  it('pages a topic to the end with keyset cursors: no repeats, no gaps, null cursor last', async () => {
    const sb = await start();
    const whole = await call(sb, 'POST', '/v1/buyer-intent/contacts', { topic_ids: ['b2b_42'], page_size: 1000 });
    expect(whole.json.next_cursor).toBeNull();
    const total = whole.json.contacts.length;
    expect(total).toBeGreaterThanOrEqual(20);
    const walked: unknown[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const r = await call(sb, 'POST', '/v1/buyer-intent/contacts', {
        topic_ids: ['b2b_42'],
        page_size: 7,
        ...(cursor ? { cursor } : {}),
      });
      expect(r.status).toBe(200);
      expect(r.json.count).toBe(r.json.contacts.length);
      expect(r.json.page_size).toBe(7);
      expect(charged(r)).toBe(r.json.contacts.length);
      expect(r.json.contacts.length).toBeGreaterThan(0);
      walked.push(...r.json.contacts);
      cursor = r.json.next_cursor ?? undefined;
      pages++;
    } while (cursor && pages < 100);
    expect(pages).toBe(Math.ceil(total / 7));
    expect(walked).toEqual(whole.json.contacts);
    const scores = whole.json.contacts.map((c: { intent_score: number }) => c.intent_score);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
  });

  it('applies filters across topics, and refuses a cursor from another query', async () => {
    const sb = await start();
    const q = { topic_ids: ['b2b_3', 'b2b_4'], email_validated: true, seniority: ['vp', 'Cxo'], page_size: 5 };
    const r = await call(sb, 'POST', '/v1/buyer-intent/contacts', q);
    for (const c of r.json.contacts) {
      expect(c.contact.email_validation_status).toMatch(/^Valid \((Esp|Digital)\)$/);
      expect(['Vp', 'Cxo']).toContain(c.contact.seniority);
      expect(c.company).toEqual({
        name: expect.any(String),
        domain: expect.any(String),
        industry: expect.any(String),
        revenue_bucket: expect.any(String),
        employee_bucket: expect.any(String),
      });
    }
    const other = await call(sb, 'POST', '/v1/buyer-intent/contacts', {
      topic_ids: ['b2b_3'],
      cursor: r.json.next_cursor,
    });
    expect(other.status).toBe(422);
    expect(other.json.error.field).toBe('cursor');
  });

  it('serves the 38,000-topic catalog with search and paging', async () => {
    const sb = await start();
    const first = await call(sb, 'GET', '/v1/buyer-intent/topics?limit=3');
    expect(first.json.topics.map((t: { topic_id: string }) => t.topic_id)).toEqual(['b2b_1', 'b2b_2', 'b2b_3']);
    const next = await call(sb, 'GET', `/v1/buyer-intent/topics?limit=3&cursor=${first.json.next_cursor}`);
    expect(next.json.topics[0].topic_id).toBe('b2b_4');
    const last = await call(
      sb,
      'GET',
      '/v1/buyer-intent/topics?limit=1000&cursor=' + Buffer.from('t:37500').toString('base64url'),
    );
    expect(last.json.topics.at(-1).topic_id).toBe('b2b_38000');
    expect(last.json.next_cursor).toBeNull();
    const found = await call(sb, 'GET', '/v1/buyer-intent/topics?q=zero%20trust&limit=1000');
    expect(found.json.topics.length).toBeGreaterThan(10);
    for (const t of found.json.topics) expect(t.name.toLowerCase()).toContain('zero trust');
    expect(charged(found)).toBe(0);
  });
});

async function poll(sbx: Sandbox, id: string): Promise<Json> {
  return (await call(sbx, 'GET', `/v1/buyer-intent/exports/${id}`)).json;
}

describe('export jobs', () => {
  it('moves queued → running → ready with the clock, then serves a signed JSONL download', async () => {
    const clock = movableClock();
    const sb = await start({ clock, exportTiming: { queuedMs: 1000, runningMs: 2000, linkTtlMs: 60_000 } });
    const submit = await call(sb, 'POST', '/v1/buyer-intent/contacts/export', {
      topic_ids: ['b2b_10', 'b2b_11'],
      limit: 100,
    });
    expect(submit.status).toBe(202);
    expect(submit.json).toMatchObject({ export_id: expect.stringMatching(/^exp_[0-9a-f]+$/), status: 'queued' });
    const id = submit.json.export_id;
    expect((await poll(sb, id)).status).toBe('queued');
    clock.advance(1500);
    expect((await poll(sb, id)).status).toBe('running');
    clock.advance(1500);
    const ready = await poll(sb, id);
    expect(ready).toMatchObject({ status: 'ready', row_count: 100 });
    expect(ready.download_url).toMatch(
      new RegExp(`^${sb.url}/downloads/exports/${id}\\.jsonl\\?expires=\\d+&sig=[0-9a-f]{64}$`),
    );
    expect(Date.parse(ready.expires_at)).toBe(T0 + 3000 + 60_000);

    const res = await fetch(ready.download_url);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/x-ndjson');
    expect(res.headers.get('x-credits-charged')).toBe('0');
    const body = await res.text();
    expect(Number(res.headers.get('content-length'))).toBe(body.length);
    const lines = body.split('\n').slice(0, -1);
    expect(lines.length).toBe(100);
    for (const line of lines) {
      expect(line.length).toBe(EXPORT_LINE_WIDTH - 1);
      const item = JSON.parse(line);
      expect(item.topic_id).toMatch(/^b2b_1[01]$/);
      expect(item.contact).toHaveProperty('email_validation_status');
    }
    // the same rows as the contacts endpoint, in order
    const page = await call(sb, 'POST', '/v1/buyer-intent/contacts', {
      topic_ids: ['b2b_10', 'b2b_11'],
      page_size: 100,
    });
    expect(lines.map((l) => JSON.parse(l))).toEqual(page.json.contacts);

    const head = await fetch(ready.download_url, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe(String(100 * EXPORT_LINE_WIDTH));
    expect(head.headers.get('x-row-count')).toBe('100');

    // a Range request resumes mid-way
    const ranged = await fetch(ready.download_url, { headers: { range: `bytes=${EXPORT_LINE_WIDTH * 98 + 10}-` } });
    expect(ranged.status).toBe(206);
    expect(ranged.headers.get('content-range')).toBe(
      `bytes ${EXPORT_LINE_WIDTH * 98 + 10}-${body.length - 1}/${body.length}`,
    );
    expect(await ranged.text()).toBe(body.slice(EXPORT_LINE_WIDTH * 98 + 10));

    // tampered, then expired links
    const sig = ready.download_url.slice(-1);
    const bad = await fetch(ready.download_url.slice(0, -1) + (sig === '0' ? '1' : '0'));
    expect(bad.status).toBe(403);
    const unsigned = await fetch(ready.download_url.replace(/&sig=.*/, ''));
    expect(unsigned.status).toBe(403);
    clock.advance(60_001);
    const gone = await fetch(ready.download_url);
    expect(gone.status).toBe(410);
    expect(((await gone.json()) as Json).error.code).toBe('gone');
    // a fresh poll gives a fresh link
    const again = await poll(sb, id);
    expect((await fetch(again.download_url)).status).toBe(200);
  });

  it('expires jobs after jobTtlMs, and ends failed under the exportFailure fault', async () => {
    const clock = movableClock();
    const sb = await start({ clock, exportTiming: { queuedMs: 0, runningMs: 0, jobTtlMs: 10_000 } });
    const a = await call(sb, 'POST', '/v1/buyer-intent/contacts/export', { topic_ids: ['b2b_1'] });
    const link = (await poll(sb, a.json.export_id)).download_url;
    clock.advance(10_000);
    expect((await poll(sb, a.json.export_id)).status).toBe('expired');
    expect((await fetch(link)).status).toBe(410);
    sb.setFaults({ exportFailure: true });
    const b = await call(sb, 'POST', '/v1/buyer-intent/contacts/export', { topic_ids: ['b2b_1'] });
    const failed = await poll(sb, b.json.export_id);
    expect(failed.status).toBe('failed');
    expect(failed.error.code).toBe('export_failed');
    expect(failed.download_url).toBeUndefined();
    expect((await call(sb, 'GET', '/v1/buyer-intent/exports/exp_00000000')).status).toBe(404);
  });

  it('streams a multi-hundred-MiB export (exportRows) with backpressure, every line whole and in order', async () => {
    const sb = await start({ exportRows: 1_000_000, exportTiming: { queuedMs: 0, runningMs: 0 } });
    const submit = await call(sb, 'POST', '/v1/buyer-intent/contacts/export', { topic_ids: ['b2b_9'] });
    const ready = await poll(sb, submit.json.export_id);
    expect(ready.row_count).toBe(1_000_000);
    const total = 1_000_000 * EXPORT_LINE_WIDTH;

    // a reader that stalls: the server stops sending once the socket's buffers are full (backpressure) instead of
    // pushing the whole body; measured in bytes received, waiting for the flow to stop (not on memory or a clock)
    const received = await new Promise<number>((resolve, reject) => {
      const req = request(ready.download_url, (res) => {
        expect(res.headers['content-length']).toBe(String(total));
        res.pause();
        const socket = res.socket;
        let last = -1;
        const check = setInterval(() => {
          if (socket.bytesRead === last) {
            clearInterval(check);
            res.destroy();
            resolve(last);
          }
          last = socket.bytesRead;
        }, 100);
      });
      req.on('error', reject);
      req.end();
    });
    expect(received).toBeLessThan(64 * 1024 * 1024);

    // a reader that reads 150 MiB: lines keep coming, whole and in order
    const res = await fetch(ready.download_url, { headers: { range: `bytes=0-${200_000 * EXPORT_LINE_WIDTH - 1}` } });
    const reader = res.body!.getReader();
    let bytes = 0;
    let newlines = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      bytes += value.length;
      for (
        let i = EXPORT_LINE_WIDTH - 1 - ((bytes - value.length) % EXPORT_LINE_WIDTH);
        i < value.length;
        i += EXPORT_LINE_WIDTH
      ) {
        if (value[i] === 10) newlines++;
      }
    }
    expect(bytes).toBe(200_000 * EXPORT_LINE_WIDTH);
    expect(newlines).toBe(200_000);
  });

  it('parses byte ranges', () => {
    expect(parseRange(undefined, 100)).toBeUndefined();
    expect(parseRange('bytes=10-', 100)).toEqual({ start: 10, end: 100 });
    expect(parseRange('bytes=10-19', 100)).toEqual({ start: 10, end: 20 });
    expect(parseRange('bytes=-5', 100)).toEqual({ start: 95, end: 100 });
    expect(parseRange('bytes=90-500', 100)).toEqual({ start: 90, end: 100 });
    expect(parseRange('bytes=100-', 100)).toBe('unsatisfiable');
    expect(parseRange('bytes=1-2,4-5', 100)).toBeUndefined();
  });
});
