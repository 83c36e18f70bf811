/**
 * Histories recorded by earlier releases replay on this release's workflow code, so work in flight while unversioned
 * workers are replaced (a bulk job, a delivery waiting out its retries) goes on instead of failing with a
 * non-determinism error. Each fixture is a whole history in Temporal's JSON form, recorded by the code of the commit
 * its file is named after.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import proto from '@temporalio/proto';
import { patchProtobufRoot } from '@temporalio/proto/lib/patch-protobuf-root.js';
import { DefaultLogger, type ReplayWorkerOptions, Runtime, Worker } from '@temporalio/worker';
import { describe, it } from 'vitest';
import { PREBUILT_BUNDLE_ENV } from '../../testkit/job-env.ts';
import { workflowsPath } from '../../workers/worker.ts';

/**
 * A history file as the SDK's own `historyFromJSON` would read it. That helper fails here ("type must be a Type")
 * because npm installs two copies of protobufjs 8 (one under @temporalio/common, one under @temporalio/proto, as the
 * top level holds grpc's protobufjs 7): the file is read with the copy the proto types belong to.
 */
async function history(file: string): Promise<unknown> {
  const json: unknown = JSON.parse(await readFile(new URL(`../fixtures/histories/${file}`, import.meta.url), 'utf8'));
  const fromProto = createRequire(createRequire(import.meta.url).resolve('@temporalio/proto'));
  const { fromJson } = fromProto('protobufjs/ext/protojson') as {
    fromJson: (type: unknown, value: unknown, options: { ignoreUnknownFields: boolean }) => unknown;
  };
  const root = patchProtobufRoot(proto) as unknown as { lookupType(name: string): unknown };
  return fromJson(root.lookupType('temporal.api.history.v1.History'), json, { ignoreUnknownFields: true });
}

function replayOptions(): ReplayWorkerOptions {
  const bundle = process.env[PREBUILT_BUNDLE_ENV];
  return bundle ? { workflowBundle: { codePath: bundle } } : { workflowsPath: workflowsPath() };
}

describe('histories of earlier releases', () => {
  Runtime.install({ logger: new DefaultLogger('WARN') });

  it('a bulk enrichment job that prepared its whole input before its first batch (5bc930c) replays', {
    timeout: 120_000,
  }, async () => {
    await Worker.runReplayHistory(replayOptions(), await history('bulk-enrich-5bc930c.json'), 'replay-enrich');
  });

  it('the account rate limiter, a run begun by continue-as-new that granted slots and refused a request (d406de8), replays', {
    timeout: 120_000,
  }, async () => {
    await Worker.runReplayHistory(replayOptions(), await history('api-rate-limiter-d406de8.json'));
  });

  it('a scheduled feed run that split its capped search (e9c1b43) replays', { timeout: 120_000 }, async () => {
    await Worker.runReplayHistory(replayOptions(), await history('scheduled-feed-split-e9c1b43.json'));
  });

  it('a scheduled feed run that failed at once when its output refused an answer (e9c1b43) replays', {
    timeout: 120_000,
  }, async () => {
    // Before runs stopped by their output were finalized as failed (FEED_FINALIZE_FAILED_PATCH).
    await Worker.runReplayHistory(replayOptions(), await history('scheduled-feed-refused-e9c1b43.json'));
  });

  it('a night of the CRM sync that resolved a row by its name and stopped at its budget (3465838) replays', {
    timeout: 120_000,
  }, async () => {
    await Worker.runReplayHistory(replayOptions(), await history('crm-sync-budget-3465838.json'));
  });

  it('a scheduled push run that caught up a domain over its limit (fda4322, before the run core) replays', {
    timeout: 120_000,
  }, async () => {
    await Worker.runReplayHistory(replayOptions(), await history('scheduled-push-fda4322.json'));
  });

  it('an intent export that submitted, polled and downloaded (fda4322, before the run core) replays', {
    timeout: 120_000,
  }, async () => {
    await Worker.runReplayHistory(replayOptions(), await history('intent-export-fda4322.json'));
  });

  it('a webhook delivery that listed its destinations in an activity task (5bc930c) replays', {
    timeout: 120_000,
  }, async () => {
    await Worker.runReplayHistory(replayOptions(), await history('deliver-signal-event-5bc930c.json'));
  });
});
