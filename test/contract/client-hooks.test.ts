/**
 * The client's onRequest/onResponse hooks against the sandbox: one event pair per attempt, each answer matching the
 * sandbox's own record of the call (status, request id, credits), retries numbered, an attempt without an answer
 * reported with status 0, and a hook that throws never failing a call.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { SignalClient } from '../../connectors/signal-api/index.ts';
import type { RequestEvent, ResponseEvent } from '../../connectors/signal-api/types.ts';
import { KEY_1, type Sandbox, sandbox } from './helpers.ts';

let server: Sandbox | undefined;
let client: SignalClient | undefined;

afterEach(async () => {
  await client?.close();
  await server?.stop();
  client = server = undefined;
});

function observedClient(baseUrl: string, retry: false | { maxAttempts: number; baseDelayMs: number }) {
  const requests: RequestEvent[] = [];
  const responses: ResponseEvent[] = [];
  client = new SignalClient({
    baseUrl,
    apiKey: KEY_1,
    retry,
    onRequest: (event) => requests.push(event),
    onResponse: (event) => responses.push(event),
  });
  return { client, requests, responses };
}

describe('client hooks', () => {
  it('report every attempt as the sandbox saw it, retries included', async () => {
    // Of every 2 requests the second is a 429 with Retry-After: 1 s.
    server = await sandbox({ faults: { rateLimitBurst: { every: 2, length: 1, retryAfterS: 1 } } });
    const { client, requests, responses } = observedClient(server.url, { maxAttempts: 3, baseDelayMs: 1 });
    const first = await client.enrichCompany({ domain: 'acme.com', limit: 3 });
    const second = await client.enrichCompany({ domain: 'globex.com', limit: 3 });

    const calls = server.truth.calls({ path: '/v1/companies/enrich' });
    // acme: answered; globex: 429, then answered on the second attempt.
    expect(calls.map((call) => call.status)).toEqual([200, 429, 200]);
    expect(requests).toEqual([
      { method: 'POST', path: '/v1/companies/enrich', attempt: 1 },
      { method: 'POST', path: '/v1/companies/enrich', attempt: 1 },
      { method: 'POST', path: '/v1/companies/enrich', attempt: 2 },
    ]);
    expect(
      responses.map(({ method, path, attempt, status, requestId, credits }) => ({
        method,
        path,
        attempt,
        status,
        requestId,
        credits,
      })),
    ).toEqual(
      calls.map((call, index) => ({
        method: 'POST',
        path: '/v1/companies/enrich',
        attempt: index === 2 ? 2 : 1,
        status: call.status,
        requestId: call.requestId,
        credits: call.credits,
      })),
    );
    expect(responses[1]?.error?.name).toBe('RateLimitedError');
    expect(responses.every((response) => response.durationMs > 0)).toBe(true);
    expect(responses.reduce((sum, response) => sum + response.credits, 0)).toBe(first.credits + second.credits);
  });

  it('report an attempt that got no answer with status 0 and its error', async () => {
    server = await sandbox({ faults: { resetRate: 1 } });
    const { client, requests, responses } = observedClient(server.url, false);
    await expect(client.verifyEmail({ email: 'ann@corp.com' })).rejects.toThrow();
    expect(requests).toEqual([{ method: 'POST', path: '/v1/emails/verify', attempt: 1 }]);
    expect(responses).toHaveLength(1);
    expect(responses[0]).toMatchObject({ status: 0, credits: 0 });
    expect(responses[0]?.requestId).toBeUndefined();
    expect(responses[0]?.error?.name).toBe('NetworkError');
  });

  it('a hook that throws does not fail the call', async () => {
    server = await sandbox();
    client = new SignalClient({
      baseUrl: server.url,
      apiKey: KEY_1,
      onRequest: () => {
        throw new Error('metrics backend down');
      },
      onResponse: () => {
        throw new Error('metrics backend down');
      },
    });
    const answer = await client.enrichCompany({ domain: 'acme.com', limit: 1 });
    expect(answer.company.domain).toBe('acme.com');
  });
});
