/**
 * The output contract on real servers: a worker process writes enrichment and export output to versitygw (started
 * for region eu-west-3, which refuses requests signed for any other) and verification output to the GCS emulator.
 * The worker has no AWS_REGION: its region comes from the AWS config file's profile. Every object it creates on S3
 * asks for SSE-KMS with the configured key (versitygw accepts but does not apply server-side encryption, so the
 * requests are checked on the wire, through a recording proxy). Every line and manifest validates against the JSON
 * Schemas shipped in schemas/.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CreateBucketCommand } from '@aws-sdk/client-s3';
import type { ValidateFunction } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, parseStorageSettings } from '../../config/storage.ts';
import { StorageConfigError } from '../../connectors/storage/index.ts';
import { MANIFEST_SCHEMA_VERSION } from '../../contract/manifest-schemas.ts';
import { type S3Server, s3ClientFor, startS3 } from '../../devstack/index.ts';
import { type ChildWorker, runCli, startChildWorker } from '../../testkit/cli-process.ts';
import { type JobEnv, startJobEnv } from '../../testkit/job-env.ts';
import { jsonSchemaValidator, shippedSchema } from '../helpers/json-schema.ts';
import { readJobOutput } from '../helpers/output.ts';

interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
}

/** Forwards every request to `target` unchanged (Host included, so SigV4 signatures stay valid) and records it. */
async function startRecordingProxy(
  target: string,
): Promise<{ url: string; requests: RecordedRequest[]; server: Server }> {
  const to = new URL(target);
  const requests: RecordedRequest[] = [];
  const server = createServer((req, res) => {
    requests.push({ method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers });
    const upstream = httpRequest(
      { host: to.hostname, port: to.port, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests, server };
}

const REGION = 'eu-west-3';
const KMS_KEY = 'alias/signal-kit-output';
const bucket = 'contract-out';

let env: JobEnv;
let s3: S3Server;
let proxy: Awaited<ReturnType<typeof startRecordingProxy>>;
let worker: ChildWorker;
let childEnv: Record<string, string>;
let dir: string;
const validators: Record<string, ValidateFunction> = {};

function expectValid(schema: string, value: unknown, what: string): void {
  const validate = validators[schema];
  if (!validate) throw new Error(`no schema ${schema}`);
  expect(validate(value), `${what}: ${JSON.stringify(validate.errors)}`).toBe(true);
}

describe('output contract', () => {
  beforeAll(async () => {
    [env, s3] = await Promise.all([startJobEnv({ gcs: true, sandbox: { seed: 31 } }), startS3({ region: REGION })]);
    await s3ClientFor(s3).send(new CreateBucketCommand({ Bucket: bucket }));
    await env.createBuckets(bucket);
    proxy = await startRecordingProxy(s3.endpoint);
    dir = await mkdtemp(join(tmpdir(), 'signal-kit-contract-'));
    const awsConfig = join(dir, 'aws-config');
    await writeFile(awsConfig, `[profile signal-kit]\nregion = ${REGION}\n`);
    childEnv = env.childEnv({
      AWS_ENDPOINT_URL_S3: proxy.url,
      AWS_ACCESS_KEY_ID: s3.accessKeyId,
      AWS_SECRET_ACCESS_KEY: s3.secretAccessKey,
      AWS_CONFIG_FILE: awsConfig,
      AWS_SHARED_CREDENTIALS_FILE: join(dir, 'no-credentials'),
      AWS_PROFILE: 'signal-kit',
      SIGNAL_KIT_S3_SSE: 'aws:kms',
      SIGNAL_KIT_S3_KMS_KEY_ID: KMS_KEY,
    });
    for (const name of ['AWS_REGION', 'AWS_DEFAULT_REGION', 'AWS_ENDPOINT_URL']) delete childEnv[name];
    worker = await startChildWorker(childEnv);
    // This process reads the results back directly from the server.
    Object.assign(process.env, {
      AWS_ENDPOINT_URL_S3: s3.endpoint,
      AWS_REGION: REGION,
      AWS_ACCESS_KEY_ID: s3.accessKeyId,
      AWS_SECRET_ACCESS_KEY: s3.secretAccessKey,
    });
    const ajv = jsonSchemaValidator();
    for (const file of [
      'manifest.schema.json',
      'enrich-line.schema.json',
      'verify-emails-line.schema.json',
      'intent-export-line.schema.json',
    ]) {
      validators[file] = ajv.compile(await shippedSchema(file));
    }
  });
  afterAll(async () => {
    await worker?.stop();
    await new Promise((resolve) => proxy?.server.close(resolve));
    await s3?.stop();
    await env?.stop();
  });

  it('enrich and export to S3 (region from the profile, SSE-KMS on every write), verify to GCS: all lines and manifests match the shipped schemas', {
    timeout: 300_000,
  }, async () => {
    const rows = ['website', 'acme.com', 'https://www.globex.com/about', 'not a domain', 'ACME.COM', 'initech.com'];
    await writeFile(join(dir, 'crm.csv'), `${rows.join('\n')}\n`);
    const emails = ['email', 'ann@corp.com', 'bob@corp.com', 'nobody', 'ann@CORP.com'];
    await writeFile(join(dir, 'emails.csv'), `${emails.join('\n')}\n`);
    const s3Out = `s3://${bucket}/out`;
    const gsOut = `gs://${bucket}/out`;
    const jobs = [
      {
        id: 'contract-enrich',
        out: s3Out,
        line: 'enrich-line.schema.json',
        args: ['enrich', '--input', pathToFileURL(join(dir, 'crm.csv')).href, '--limit', '3'],
      },
      {
        id: 'contract-verify',
        out: gsOut,
        line: 'verify-emails-line.schema.json',
        args: ['verify-emails', '--input', pathToFileURL(join(dir, 'emails.csv')).href],
      },
      {
        id: 'contract-intent',
        out: s3Out,
        line: 'intent-export-line.schema.json',
        args: ['intent-export', '--topics', 'b2b_12', '--limit', '40'],
      },
    ];
    for (const job of jobs) {
      const result = await runCli([...job.args, '--output', job.out, '--job-id', job.id, '--wait'], childEnv, 120_000);
      expect(result.code, `${job.id}: ${result.stderr}\n${worker.output()}`).toBe(0);
      const { manifest, lines } = await readJobOutput(job.out, job.id);
      expect(manifest.schema_version).toBe(MANIFEST_SCHEMA_VERSION);
      // Read alone, a manifest locates its parts: under the output URL it names.
      expect(manifest.output).toBe(job.out);
      for (const part of manifest.parts)
        expect((await openStore(manifest.output).stat(part.key))?.size).toBe(part.bytes);
      expectValid('manifest.schema.json', manifest, `${job.id} manifest`);
      expect(lines.length).toBeGreaterThan(0);
      for (const [index, line] of lines.entries()) expectValid(job.line, line, `${job.id} line ${index + 1}`);
      if (job.id === 'contract-enrich') {
        // acme.com, globex.com, initech.com answered once each, ACME.COM a duplicate of acme.com, the junk row invalid.
        expect(lines).toHaveLength(5);
        expect(lines.filter((line) => line['status'] === 'invalid')).toHaveLength(1);
        expect(lines.filter((line) => line['status'] === 'duplicate')).toHaveLength(1);
      }
    }

    // Every object written to S3 (single PUTs and multipart uploads) asked for SSE-KMS with the key.
    const creates = proxy.requests.filter(
      (r) =>
        (r.method === 'PUT' && !/[?&]partNumber=/.test(r.url)) || (r.method === 'POST' && /[?&]uploads\b/.test(r.url)),
    );
    expect(creates.length).toBeGreaterThan(0);
    for (const create of creates) {
      expect(create.headers['x-amz-server-side-encryption'], `${create.method} ${create.url}`).toBe('aws:kms');
      expect(create.headers['x-amz-server-side-encryption-aws-kms-key-id'], create.url).toBe(KMS_KEY);
    }
    // Signed for the profile's region (the server would refuse any other).
    const scopes = new Set(
      proxy.requests.map((r) => /Credential=[^/]+\/\d+\/([^/]+)\//.exec(String(r.headers.authorization))?.[1]),
    );
    expect([...scopes]).toEqual([REGION]);
  });

  it('a server-side encryption setting that cannot work is refused, naming the variable', () => {
    expect(() => parseStorageSettings({ SIGNAL_KIT_S3_SSE: 'aes' }).s3.encryption).toThrow(StorageConfigError);
    expect(() => parseStorageSettings({ SIGNAL_KIT_S3_SSE: 'aes' }).s3.encryption).toThrow(
      /SIGNAL_KIT_S3_SSE must be one of/,
    );
    expect(
      () => parseStorageSettings({ SIGNAL_KIT_S3_SSE: 'AES256', SIGNAL_KIT_S3_KMS_KEY_ID: 'k' }).s3.encryption,
    ).toThrow(/SIGNAL_KIT_S3_KMS_KEY_ID needs SIGNAL_KIT_S3_SSE=aws:kms/);
    expect(parseStorageSettings({ SIGNAL_KIT_S3_KMS_KEY_ID: 'k' }).s3.encryption).toEqual({
      serverSideEncryption: 'aws:kms',
      kmsKeyId: 'k',
    });
    expect(() => openStore(`s3://${bucket}/x`, { env: { SIGNAL_KIT_S3_SSE: 'none' } })).toThrow(StorageConfigError);
  });
});
