import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { Faults } from '../../../sandbox/faults.ts';
import type { Sandbox } from '../../../sandbox/index.ts';
import { call, charged, start } from './helpers.ts';

let sb: Sandbox | undefined;
afterEach(async () => {
  await sb?.stop();
  sb = undefined;
});

const enrichBody = { domain: 'acme.com', limit: 2 };

describe('fault injection', () => {
  it('latencyMs delays every API response', async () => {
    sb = await start({ faults: { latencyMs: 150 } });
    const t0 = performance.now();
    expect((await call(sb, 'GET', '/v1/stats')).status).toBe(200);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(140);
  });

  it('errorRate answers 500/502/503, some as HTML, never charged', async () => {
    sb = await start({ faults: { errorRate: 1 } });
    const statuses = new Set<number>();
    let html = 0;
    for (let i = 0; i < 24; i++) {
      const r = await call(sb, 'POST', '/v1/companies/enrich', enrichBody);
      statuses.add(r.status);
      expect(charged(r)).toBe(0);
      if (r.headers.get('content-type') === 'text/html') html++;
      else expect(['internal_error', 'bad_gateway', 'unavailable']).toContain(r.json.error.code);
      if (r.status === 503) expect(r.headers.get('retry-after')).toBe('1');
    }
    expect([...statuses].sort()).toEqual([500, 502, 503]);
    expect(html).toBeGreaterThan(0);
    expect(html).toBeLessThan(24);
    expect(sb.ledger.total()).toBe(0);
  });

  it('rateLimitBurst: of every `every` requests the last `length` are 429 with Retry-After', async () => {
    sb = await start({ faults: { rateLimitBurst: { every: 5, length: 2, retryAfterS: 3 } } });
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) {
      const r = await call(sb, 'GET', '/v1/stats');
      statuses.push(r.status);
      if (r.status === 429) expect(r.headers.get('retry-after')).toBe('3');
    }
    expect(statuses).toEqual([200, 200, 200, 429, 429, 200, 200, 200, 429, 429]);
  });

  it('resetRate destroys the socket without an answer', async () => {
    sb = await start({ faults: { resetRate: 1 } });
    const err = await call(sb, 'POST', '/v1/companies/enrich', enrichBody).catch((e: Error) => e);
    expect(err).toBeInstanceOf(Error);
    expect(sb.ledger.total()).toBe(0);
  });

  it('malformedJsonRate answers 200 with a cut-off JSON body, not charged', async () => {
    sb = await start({ faults: { malformedJsonRate: 1 } });
    const r = await call(sb, 'POST', '/v1/companies/enrich', enrichBody);
    expect(r.status).toBe(200);
    expect(r.json).toBeUndefined();
    expect(() => JSON.parse(r.text)).toThrow();
    expect(charged(r)).toBe(0);
    expect(sb.ledger.total()).toBe(0);
  });

  it('verifyUpstreamFailureRate: failures are listed as errors and free; the single form is 502', async () => {
    sb = await start({ faults: { verifyUpstreamFailureRate: 0.5 } });
    const emails = Array.from({ length: 40 }, (_, i) => `person.${i}@acme.com`);
    const r = await call(sb, 'POST', '/v1/emails/verify/bulk', { emails });
    const failures = r.json.errors.filter((e: { code: string }) => e.code === 'upstream_failure');
    expect(failures.length).toBeGreaterThan(5);
    expect(failures.length + r.json.verifications.length).toBe(40);
    const paid = r.json.verifications.filter((v: { result: string }) => v.result !== 'unknown').length;
    expect(charged(r)).toBe(paid);
    sb.setFaults({ verifyUpstreamFailureRate: 1 });
    const single = await call(sb, 'POST', '/v1/emails/verify', { email: 'jane@acme.com' });
    expect(single.status).toBe(502);
    expect(single.json.error.code).toBe('upstream_failure');
    expect(charged(single)).toBe(0);
    expect(sb.ledger.total()).toBe(paid);
  });

  it('setFaults replaces the options; {} turns everything off', async () => {
    sb = await start({ faults: { errorRate: 1 } });
    expect((await call(sb, 'GET', '/v1/stats')).status).toBeGreaterThanOrEqual(500);
    sb.setFaults({});
    expect((await call(sb, 'GET', '/v1/stats')).status).toBe(200);
  });

  it('decides faults from the seed: same seed, same sequence', () => {
    const run = (seed: number) => {
      const f = new Faults(seed, { errorRate: 0.3, resetRate: 0.1, malformedJsonRate: 0.1 });
      return Array.from({ length: 50 }, () => f.decide().kind).join(',');
    };
    expect(run(5)).toBe(run(5));
    expect(run(5)).not.toBe(run(6));
  });
});

describe('download faults', () => {
  async function readyExport(s: Sandbox): Promise<string> {
    const sub = await call(s, 'POST', '/v1/buyer-intent/contacts/export', { topic_ids: ['b2b_2', 'b2b_3'] });
    return (await call(s, 'GET', `/v1/buyer-intent/exports/${sub.json.export_id}`)).json.download_url;
  }

  it('truncateDownloads cuts the body short of its Content-Length and destroys the socket', async () => {
    sb = await start({ exportTiming: { queuedMs: 0, runningMs: 0 }, faults: { truncateDownloads: 1 } });
    const url = await readyExport(sb);
    const result = await new Promise<{ length: number; received: number; aborted: boolean }>((resolve, reject) => {
      request(url, (res) => {
        let received = 0;
        res.on('data', (c: Buffer) => {
          received += c.length;
        });
        const finish = (aborted: boolean) => () =>
          resolve({ length: Number(res.headers['content-length']), received, aborted });
        res.on('end', finish(false));
        res.on('error', finish(true));
        res.on('aborted', finish(true));
      })
        .on('error', reject)
        .end();
    });
    expect(result.aborted).toBe(true);
    expect(result.received).toBeGreaterThan(0);
    expect(result.received).toBeLessThan(result.length);
  });

  it('downloadBytesPerSec throttles the body', async () => {
    sb = await start({
      exportTiming: { queuedMs: 0, runningMs: 0 },
      exportRows: 200,
      faults: { downloadBytesPerSec: 300_000 },
    });
    const url = await readyExport(sb);
    const t0 = performance.now();
    const body = await (await fetch(url)).text();
    const seconds = (performance.now() - t0) / 1000;
    expect(body.length).toBe(200 * 768);
    expect(seconds).toBeGreaterThan(0.3);
  });
});
