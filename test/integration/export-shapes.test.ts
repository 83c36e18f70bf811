/**
 * Intent exports against a service whose shapes differ from the sandbox's (the spec shows neither the submit's nor
 * the poll's body): the kit keeps the id from a submit without a status, waits a bounded time on a status it does
 * not know and then fails quoting the service, and downloads when an unknown status comes with a link.
 */
import type { ServerResponse } from 'node:http';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobFailureMessage } from '../../cli/job-outcome.ts';
import { removeTempDirs, tempDir } from '../../testkit/drill-input.ts';
import { type JobEnv, startJobEnv } from '../../testkit/job-env.ts';
import type { IntentExportInput } from '../../workflows/intent-export.ts';
import { readJobOutput } from '../helpers/output.ts';
import { runJob } from '../promises/helpers.ts';
import { startTestServer, type TestServer } from '../unit/client/server.ts';

const LINES = ['{"topic_id":"b2b_1","intent_score":0.9}', '{"topic_id":"b2b_1","intent_score":0.8}'];

describe('intent export: shapes the spec does not show', () => {
  let env: JobEnv;
  let service: TestServer;

  beforeAll(async () => {
    service = await startTestServer((req, res) => {
      const send = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json', 'x-credits-charged': '0' });
        res.end(JSON.stringify(body));
      };
      const topics = (req.json as { topic_ids?: string[] } | undefined)?.topic_ids ?? [];
      if (req.url === '/v1/buyer-intent/contacts/export') {
        // No status at all, the id under another name.
        return send(202, { id: topics.includes('b2b_2') ? 'exp_link' : 'exp_stuck' });
      }
      if (req.url === '/v1/buyer-intent/exports/exp_stuck') {
        // A field of a type the client does not expect, too: the status is still read.
        return send(200, { id: 'exp_stuck', status: 'awaiting_review', eta: 'unknown', row_count: 'n/a' });
      }
      if (req.url === '/v1/buyer-intent/exports/exp_link') {
        return send(200, { id: 'exp_link', status: 'done', download_url: `${service.url}/files/exp_link.jsonl` });
      }
      if (req.url?.startsWith('/files/exp_link.jsonl')) return serveFile(res);
      return send(404, { error: { code: 'not_found', message: req.url } });
    });
    env = await startJobEnv();
    await env.startWorker({ url: service.url });
  });
  afterAll(async () => {
    await env?.stop();
    await service?.close();
    await removeTempDirs();
  });

  const job = async (jobId: string, topic: string): Promise<IntentExportInput & { jobId: string }> => ({
    jobId,
    output: pathToFileURL(await tempDir(jobId)).href,
    request: { topic_ids: [topic] },
    poll: { initialMs: 50, maxMs: 100, unknownStatusTimeoutMs: 600 },
  });

  it('a status it does not know is waited on for a bounded time, then the job fails quoting the service', async () => {
    const input = await job('shapes-stuck', 'b2b_1');
    let message = '';
    await runJob(env, 'intentExport', input).catch((error: unknown) => {
      message = jobFailureMessage(error);
    });
    expect(message).toContain('status "awaiting_review", which the kit does not know');
    expect(message).toContain('"eta":"unknown"');
    const { manifest } = await readJobOutput(input.output, input.jobId);
    expect(manifest.status).toBe('failed');
    expect(service.requests.filter((r) => r.url === '/v1/buyer-intent/exports/exp_stuck').length).toBeLessThan(30);
  });

  it('an unknown status that comes with a link is downloaded', async () => {
    const input = await job('shapes-link', 'b2b_2');
    const result = await runJob(env, 'intentExport', input);
    expect(result.status).toBe('completed');
    const { lines } = await readJobOutput(input.output, input.jobId);
    expect(lines.map((l) => JSON.stringify(l))).toEqual(LINES);
  });
});

function serveFile(res: ServerResponse): void {
  const body = `${LINES.join('\n')}\n`;
  res.writeHead(200, { 'content-type': 'application/x-ndjson', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}
