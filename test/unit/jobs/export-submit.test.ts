import { mkdtemp, rm } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { getIntentExportStatus, submitIntentExport } from '../../../activities/jobs/intent-export.ts';
import type { JobRef } from '../../../activities/jobs/types.ts';
import { openStore } from '../../../config/storage.ts';
import { SignalClient } from '../../../connectors/signal-api/client.ts';
import { type Handler, startTestServer, type TestServer } from '../client/server.ts';

let server: TestServer | undefined;
let dir: string | undefined;
afterEach(async () => {
  await server?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
  server = undefined;
  dir = undefined;
});

const reply = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(text);
};

async function setup(handler: Handler) {
  server = await startTestServer(handler);
  dir = await mkdtemp(join(tmpdir(), 'signal-kit-export-submit-'));
  const client = new SignalClient({ baseUrl: server.url, apiKey: 'sk_test_submit', retry: false });
  const store = openStore(pathToFileURL(dir).href);
  const job: JobRef = { jobId: 'j1', kind: 'intent-export', output: store.url };
  const submit = (resubmit = false) =>
    submitIntentExport(client, store, { job, request: { topic_ids: ['b2b_1', 'b2b_2'] }, resubmit });
  return { client, store, job, submit };
}

/** What the status call makes of one 200 answer from the service for `exportId`, and the store it wrote to. */
async function statusAnswered(exportId: string, body: Record<string, unknown>) {
  const { client, store, job } = await setup((_req, res) => reply(res, 200, body));
  return { state: await getIntentExportStatus(client, store, { job, exportId }), store };
}

const submits = () => server!.requests.filter((r) => r.url === '/v1/buyer-intent/contacts/export').length;

describe('intent export submit: the id is saved as soon as it is known, and no submit is repeated silently', () => {
  it('saves an id from an answer without a status, the id under another name', async () => {
    const { submit } = await setup((_req, res) => reply(res, 202, { id: 'exp_a1' }, { 'x-credits-charged': '50' }));
    expect(await submit()).toEqual({ exportId: 'exp_a1', credits: 50 });
    expect(await submit()).toEqual({ exportId: 'exp_a1', credits: 50 });
    expect(submits()).toBe(1);
  });

  it('takes the id from an answer of an unexpected shape', async () => {
    const { submit } = await setup((_req, res) =>
      reply(res, 200, { export_id: 'exp_odd', row_count: 'many' }, { 'x-credits-charged': '50' }),
    );
    expect(await submit()).toEqual({ exportId: 'exp_odd', credits: 50 });
  });

  it('a 5xx that says it charged stops with the amount and --resubmit; nothing is sent again until resubmit', async () => {
    const { submit } = await setup((_req, res, n) =>
      n === 0
        ? reply(res, 502, { error: { code: 'bad_gateway', message: 'lost' } }, { 'x-credits-charged': '50' })
        : reply(res, 202, { export_id: 'exp_2', status: 'queued' }, { 'x-credits-charged': '50' }),
    );
    await expect(submit()).rejects.toThrow(/50 credits were charged.*--resubmit/s);
    await expect(submit()).rejects.toThrow(/--resubmit/);
    expect(submits()).toBe(1);
    expect(await submit(true)).toEqual({ exportId: 'exp_2', credits: 50 });
    expect(submits()).toBe(2);
  });

  it('a 5xx saying 0 credits, a 429 and a 422 did nothing: the next try submits normally', async () => {
    const answers: [number, Record<string, string>][] = [
      [503, { 'x-credits-charged': '0', 'retry-after': '1' }],
      [429, { 'retry-after': '1' }],
      [422, {}],
    ];
    const { submit } = await setup((_req, res, n) => {
      const answer = answers[n];
      if (answer) return reply(res, answer[0], { error: { code: 'x', message: 'no' } }, answer[1]);
      return reply(res, 202, { export_id: 'exp_3', status: 'queued' }, { 'x-credits-charged': '50' });
    });
    for (let i = 0; i < answers.length; i++) await expect(submit()).rejects.toThrow();
    expect(await submit()).toEqual({ exportId: 'exp_3', credits: 50 });
  });

  it('a reset after sending is an unknown outcome', async () => {
    const { submit } = await setup((_req, res) => {
      res.socket?.destroy();
    });
    await expect(submit()).rejects.toThrow(/unknown outcome.*--resubmit/s);
    await expect(submit()).rejects.toThrow(/unknown outcome/);
    expect(submits()).toBe(1);
  });

  it('the status call quotes what the service said and notices a link under a status it does not know', async () => {
    const answer = { export_id: 'exp_4', status: 'almost', download_url: '/dl/exp_4?sig=abc', note: 'hi' };
    const { state } = await statusAnswered('exp_4', answer);
    expect(state).toMatchObject({ status: 'almost', downloadable: true });
    expect(state.said).toContain('"note":"hi"');
    expect(state.said).not.toContain('sig=abc');
  });

  it('the status call reads an answer of an unexpected shape for its status and link', async () => {
    const answer = { id: 'exp_5', status: 'ready', row_count: 'twelve', download_url: '/dl/exp_5' };
    const { state, store } = await statusAnswered('exp_5', answer);
    expect(state).toMatchObject({ status: 'ready', downloadable: true });
    expect(state.said).toContain('"row_count":"twelve"');
    expect(JSON.parse(await store.readText('j1/work/export-link.json'))).toMatchObject({ download_url: '/dl/exp_5' });
  });
});
