/**
 * Every reader of a manifest believes it only in its own place (contract/manifest-place.ts): a manifest planted
 * in a job's folder naming another job, or listing a local secret file (by a file:// URL, a climb out of its folder,
 * another output) is refused by the field that disagrees, and no reader shows a byte or the sha256 of that file: not
 * in what it returns, not in what it writes, not on stdout or stderr.
 */
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { type CollectorManifest, createCollectorActivities } from '../../../activities/collector.ts';
import { findFinishedJob } from '../../../activities/jobs/finalize.ts';
import type { Manifest } from '../../../activities/jobs/types.ts';
import { collectorManifestKey, collectorStagingKey } from '../../../activities/webhook-layout.ts';
import { openStore } from '../../../config/storage.ts';
import { webhookDeliveryConfig } from '../../../config/webhook-destinations.ts';
import { ManifestPlaceError } from '../../../connectors/errors.ts';
import { SignalCreatedEventSchema } from '../../../connectors/webhooks/events.ts';
import { placeManifest } from '../../../contract/manifest-place.ts';
import { dryRun } from '../../../library/dry-run.ts';
import { completedJobManifest } from '../../helpers/job-manifest.ts';

const SECRET = 'AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n';
const SECRET_SHA = createHash('sha256').update(SECRET).digest('hex');

let dir: string;
let output: string;
let secretPath: string;
let input: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'signal-kit-manifest-place-'));
  output = pathToFileURL(join(dir, 'out')).href;
  secretPath = join(dir, 'secret.env');
  await writeFile(secretPath, SECRET);
  const rows = ['domain', ...Array.from({ length: 20 }, (_, i) => `shop${i}.com`)];
  await writeFile(join(dir, 'in.csv'), `${rows.join('\n')}\n`);
  input = pathToFileURL(join(dir, 'in.csv')).href;
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Everything written to stdout and stderr while the test ran. */
let said: string[] = [];
beforeAll(() => {
  for (const stream of [process.stdout, process.stderr]) {
    const write = stream.write.bind(stream);
    vi.spyOn(stream, 'write').mockImplementation(((chunk: unknown, ...rest: unknown[]) => {
      said.push(String(chunk));
      return (write as (...args: unknown[]) => boolean)(chunk, ...rest);
    }) as typeof stream.write);
  }
});
afterEach(() => {
  said = [];
});

/** Neither the secret's bytes nor its sha256 in `values` or in anything written to stdout/stderr. */
function expectNoSecret(...values: unknown[]): void {
  const all = [...values.map((v) => (typeof v === 'string' ? v : (JSON.stringify(v) ?? ''))), ...said].join('\n');
  expect(all).not.toContain(SECRET_SHA);
  expect(all).not.toContain('wJalrXUtnFEMI');
  expect(all).not.toContain('AWS_SECRET');
}

/** A completed enrich job's manifest as the kit writes one, with one part in its folder. */
const jobManifest = (jobId: string, over: Partial<Manifest> = {}): Manifest =>
  completedJobManifest(jobId, output, {
    parts: [
      {
        key: `${jobId}/parts/part-00000.jsonl.gz`,
        lines: 10,
        bytes: 100,
        sha256: 'a'.repeat(64),
        table: 'lines',
        format: 'jsonl',
      },
    ],
    ...over,
  });

/** The secret as a part, under `key`, with its true size and sha256 (learnt elsewhere). */
const secretPart = (key: string) => ({ key, lines: 1, bytes: Buffer.byteLength(SECRET), sha256: SECRET_SHA });

/**
 * Manifests planted at `<jobId>/_manifest.json`, each with the field the reader must name: another job's manifest
 * copied into this job's folder, and this job's manifest listing the secret by a file:// URL, by climbing out of its
 * folder, from another job's folder, or under an `output` that is the secret's folder.
 */
const PLANTED: Record<string, { field: RegExp; manifest: (jobId: string) => Manifest }> = {
  'another job copied in': { field: /field "job_id"/, manifest: () => jobManifest('other-job') },
  'a file:// part': {
    field: /field "parts\.0\.key"/,
    manifest: (jobId) => jobManifest(jobId, { parts: [secretPart(pathToFileURL(secretPath).href)] }),
  },
  'a part climbing out': {
    field: /field "parts\.0\.key"/,
    manifest: (jobId) => jobManifest(jobId, { parts: [secretPart(`${jobId}/../../secret.env`)] }),
  },
  "another job's folder": {
    field: /field "parts\.0\.key"/,
    manifest: (jobId) => jobManifest(jobId, { parts: [secretPart('other-job/parts/part-00000.jsonl.gz')] }),
  },
  'another output': {
    field: /field "output"/,
    manifest: (jobId) => jobManifest(jobId, { output: pathToFileURL(dir).href, parts: [secretPart('secret.env')] }),
  },
};
const PLANTED_NAMES = Object.keys(PLANTED);

describe('placeManifest', () => {
  const url = (key: string) => `${output}/${key}`;

  it("places a job's manifest in its own folder: its parts are read from the output it lies under", () => {
    const manifest = jobManifest('job-1');
    expect(
      placeManifest(url('job-1/_manifest.json'), { folder: 'job-1', folderField: 'job_id', depth: 1, ...manifest }),
    ).toEqual({ url: url('job-1/_manifest.json'), output, folder: 'job-1' });
  });

  it.each(PLANTED_NAMES)('refuses %s, naming the field', (name) => {
    const { field } = PLANTED[name]!;
    const manifest = PLANTED[name]!.manifest('job-1');
    const place = () =>
      placeManifest(url('job-1/_manifest.json'), {
        folder: manifest.job_id,
        folderField: 'job_id',
        depth: 1,
        ...manifest,
      });
    expect(place).toThrow(ManifestPlaceError);
    expect(place).toThrow(field);
  });

  it.each([
    ['an absolute path', '/etc/hostname'],
    ['an escaped climb', 'job-1/%2e%2e/%2e%2e/secret.env'],
    ['a backslash climb', 'job-1/..\\..\\secret.env'],
    ['an s3 URL', 's3://other-bucket/job-1/part.jsonl'],
    ['an empty segment', 'job-1//part.jsonl'],
  ])('refuses a part key that is %s', (_name, key) => {
    expect(() =>
      placeManifest(url('job-1/_manifest.json'), {
        folder: 'job-1',
        folderField: 'job_id',
        parts: [{ key }],
      }),
    ).toThrow(/field "parts\.0\.key": a part must lie in the manifest's own folder \(job-1\/\)/);
  });

  it('refuses a job id that is not one folder', () => {
    expect(() =>
      placeManifest(url('a/b/_manifest.json'), { folder: 'a/b', folderField: 'job_id', depth: 1, parts: [] }),
    ).toThrow(/field "job_id"/);
  });
});

describe("a job's own manifest, planted", () => {
  it.each(PLANTED_NAMES)(
    'with %s: the job is not found finished (it runs), and the dry run does not call it completed',
    async (name) => {
      const jobId = `resume-${name.replace(/[^a-z]/g, '')}`;
      const { field } = PLANTED[name]!;
      const body = JSON.stringify(PLANTED[name]!.manifest(jobId));
      const store = openStore(output);
      await store.writeText(`${jobId}/_manifest.json`, body);

      const finished = await findFinishedJob(store, { job: { jobId, kind: 'enrich', output } });
      expect(finished).toBeNull();

      const report = await dryRun({ workflow: 'bulkEnrich', input: { jobId, input, output, options: {} } }, (url) =>
        openStore(url),
      );
      expect(report.credits.expectedBasis).not.toMatch(/already completed/);
      const skipped = report.skippedManifests.find((s) => s.key === `${jobId}/_manifest.json`);
      expect(skipped?.reason).toMatch(field);
      expectNoSecret(finished, report);
    },
  );

  it('a manifest moved into another folder is not counted in the rate the dry run learns', async () => {
    const history = pathToFileURL(join(dir, 'history')).href;
    const store = openStore(history);
    const own = (jobId: string, credits: number) =>
      JSON.stringify({ ...jobManifest(jobId, { credits_charged: credits }), output: history, parts: [] });
    await store.writeText('paid-4/_manifest.json', own('paid-4', 40));
    // Another job's manifest (1,000 credits for 10 domains) under a folder that is not its own.
    await store.writeText('moved/_manifest.json', own('paid-100', 1000));
    const report = await dryRun(
      { workflow: 'bulkEnrich', input: { jobId: 'next', input, output: history, options: {} } },
      (url) => openStore(url),
    );
    // 20 domains at the one placed job's rate of 4 credits per domain.
    expect(report.credits.expected).toBe(80);
    expect(report.skippedManifests).toEqual([
      { key: 'moved/_manifest.json', reason: expect.stringMatching(/field "job_id"/) },
    ]);
  });
});

describe("the webhook collector's manifest, planted", () => {
  it("keeps none of a planted manifest's parts (another destination's, a file:// secret) in the manifest it writes", async () => {
    const root = await mkdtemp(join(dir, 'collector-'));
    const url = pathToFileURL(root).href;
    const config = webhookDeliveryConfig({
      destinations: [{ id: 'lake', kind: 'bucket', url }],
      deadLetterUrl: url,
    });
    const dest = config.destinations[0];
    if (dest?.kind !== 'bucket') throw new Error('no bucket destination');
    const store = openStore(url);
    const part = (seq: number, key: string) => ({
      seq,
      key,
      count: 1,
      bytes: Buffer.byteLength(SECRET),
      sha256: SECRET_SHA,
      written_at: '2026-03-01T00:00:00.000Z',
    });
    const cases: [string, CollectorManifest][] = [
      [
        'its own id, a file:// part',
        {
          destination_id: 'lake',
          output: url,
          parts: [part(1, pathToFileURL(secretPath).href)],
          events: 1,
          updated_at: '',
        },
      ],
      [
        'its own id, a part climbing out',
        {
          destination_id: 'lake',
          output: url,
          parts: [part(1, 'collector/lake/../../../secret.env')],
          events: 1,
          updated_at: '',
        },
      ],
      [
        "another destination's manifest",
        {
          destination_id: 'other',
          output: url,
          parts: [part(1, 'collector/other/part-00001.jsonl')],
          events: 1,
          updated_at: '',
        },
      ],
    ];
    const activities = createCollectorActivities({ config, openStore });
    let seq = 10;
    for (const [name, manifest] of cases) {
      await store.writeText(collectorManifestKey(dest), JSON.stringify(manifest));
      const event = SignalCreatedEventSchema.parse({
        event: 'signal.created',
        signal: {
          id: `sig_${seq}`,
          type: 'news',
          company: { name: 'Co', domain: 'co.com' },
          title: 't',
          detected_at: '2026-03-01T12:00:00+00:00',
          data: {},
        },
      });
      await store.writeText(collectorStagingKey(dest, event.signal.id), JSON.stringify(event));
      const written = await activities.writeCollectorPart({ destinationId: 'lake', seq, signalIds: [event.signal.id] });
      const after = JSON.parse(await store.readText(collectorManifestKey(dest))) as CollectorManifest;
      expect(after.destination_id, name).toBe('lake');
      expect(
        after.parts.map((p) => p.key),
        name,
      ).toEqual([written.key]);
      expectNoSecret(after, written);
      seq += 1;
    }
  });
});
