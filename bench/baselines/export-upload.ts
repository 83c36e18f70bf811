/**
 * The baseline of `export-streaming`: the shortest way to get an export's download into S3. One undici GET of the
 * signed download URL piped into `Upload` from @aws-sdk/lib-storage with its defaults, nothing else (no line
 * checks, no checksum, no retry, no manifest). S3 settings come from the standard AWS_* variables.
 *
 *   node bench/baselines/export-upload.ts --url DOWNLOAD_URL --bucket BUCKET --key KEY [--report report.json]
 */
import { S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { request } from 'undici';
import { parseScriptFlags, writeScriptReport } from '../lib/script-io.ts';

const values = parseScriptFlags(
  'export-upload.ts --url URL --bucket BUCKET --key KEY [--report FILE]',
  ['url', 'bucket', 'key'],
  { report: undefined },
);

const s3 = new S3Client({
  region: process.env['AWS_REGION'] ?? 'us-east-1',
  endpoint: process.env['AWS_ENDPOINT_URL_S3'],
  forcePathStyle: true,
  credentials: {
    accessKeyId: process.env['AWS_ACCESS_KEY_ID'] ?? '',
    secretAccessKey: process.env['AWS_SECRET_ACCESS_KEY'] ?? '',
  },
});

const started = performance.now();
const download = await request(values.url);
if (download.statusCode !== 200) throw new Error(`download answered ${download.statusCode}`);
const bytes = Number(download.headers['content-length']);
await new Upload({
  client: s3,
  params: { Bucket: values.bucket, Key: values.key, Body: download.body, ContentType: 'application/x-ndjson' },
}).done();
const elapsedMs = performance.now() - started;
s3.destroy();

await writeScriptReport(values.report, { bytes, elapsedMs });
