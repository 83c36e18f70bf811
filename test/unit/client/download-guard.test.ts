/**
 * An export's download_url comes from an answer: on another host than the API it must be https and pass the SSRF
 * guard, so a link cannot make the worker fetch from loopback, private or metadata addresses.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignalClient, ValidationError } from '../../../connectors/signal-api/index.ts';
import { startTestServer, type TestServer } from './server.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/x-ndjson' });
    res.end('{"a":1}\n');
  });
});
afterAll(async () => {
  await server.close();
});

/** A client of a remote API (never contacted here: a download by URL goes to the link only). */
async function download(url: string, baseUrl = 'https://api.signal.invalid'): Promise<unknown> {
  const client = new SignalClient({ baseUrl, apiKey: 'sk_test_dl', retry: { maxAttempts: 3 } });
  try {
    const d = await client.downloadIntentExport(url);
    let text = '';
    for await (const chunk of d.body) text += String(chunk);
    return text;
  } catch (err) {
    return err;
  } finally {
    await client.close();
  }
}

describe('download_url guard', () => {
  it('refuses a plain-http link on another host, before any request', async () => {
    const err = await download('http://downloads.invalid/exports/1.jsonl');
    expect(err).toBeInstanceOf(ValidationError);
    expect((err as ValidationError).field).toBe('download_url');
    expect((err as ValidationError).message).toMatch(/must be https/);
  });

  it.each([
    'https://127.0.0.1:1/exports/1.jsonl',
    'https://169.254.169.254/latest/meta-data/',
    'https://[::ffff:10.0.0.1]/x',
  ])('refuses an https link to an internal address (%s) before connecting', async (url) => {
    server.requests.length = 0;
    const err = await download(url);
    expect(err).toBeInstanceOf(ValidationError);
    expect((err as ValidationError).code).toBe('download_blocked');
    expect((err as ValidationError).message).toMatch(/not allowlisted/);
  });

  it("still downloads from the API's own origin", async () => {
    expect(await download(`${server.url}/downloads/exports/1.jsonl`, server.url)).toBe('{"a":1}\n');
  });

  it('with an API on this machine (a local sandbox, a proxy), follows a link on this machine too', async () => {
    const api = `http://localhost:${new URL(server.url).port}`;
    expect(await download(`${server.url}/downloads/exports/1.jsonl`, api)).toBe('{"a":1}\n');
  });
});
