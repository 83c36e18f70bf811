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

/** Each recorded history, what it holds, and the commit whose code recorded it (in the file's name). */
const HISTORIES: Array<{ holds: string; file: string; workflowId?: string }> = [
  {
    holds: 'a bulk enrichment job that prepared its whole input before its first batch',
    file: 'bulk-enrich-5bc930c.json',
    workflowId: 'replay-enrich',
  },
  {
    holds: 'the account rate limiter, a run begun by continue-as-new that granted slots and refused a request',
    file: 'api-rate-limiter-d406de8.json',
  },
  { holds: 'a scheduled feed run that split its capped search', file: 'scheduled-feed-split-e9c1b43.json' },
  // Before runs stopped by their output were finalized as failed (FEED_FINALIZE_FAILED_PATCH).
  {
    holds: 'a scheduled feed run that failed at once when its output refused an answer',
    file: 'scheduled-feed-refused-e9c1b43.json',
  },
  {
    holds: 'a night of the CRM sync that resolved a row by its name and stopped at its budget',
    file: 'crm-sync-budget-3465838.json',
  },
  // Recorded before the scheduled kinds shared one workflow-side run skeleton (issue 33's moves): each kind's
  // window that continued as new, the run it continued as, a contacts night, a feed that split its search.
  { holds: 'a night of the CRM sync whose first window continued as new', file: 'crm-sync-window-ca48e0e.json' },
  { holds: 'the run a night of the CRM sync continued as, finalized', file: 'crm-sync-carried-ca48e0e.json' },
  { holds: 'a night of a contacts sync (a call per contact)', file: 'crm-sync-contacts-ca48e0e.json' },
  { holds: 'a scheduled push run whose first window continued as new', file: 'scheduled-push-window-ca48e0e.json' },
  {
    holds: 'the run a scheduled push continued as, with its catch-up rounds',
    file: 'scheduled-push-carried-ca48e0e.json',
  },
  {
    holds: 'a scheduled feed run that resumed nothing and split its search',
    file: 'scheduled-feed-slices-ca48e0e.json',
  },
  // A push and a feed with `--notify`, stopped on their budget: the alert's activity after the run (RUN_ALERT_PATCH).
  {
    holds: 'a scheduled push run with --notify that alerted its budget stop',
    file: 'scheduled-push-notify-4bf99d8.json',
  },
  {
    holds: 'a scheduled feed run with --notify that alerted its budget stop',
    file: 'scheduled-feed-notify-4bf99d8.json',
  },
  // Recorded before the run core moved push and export code (issue 28's moves).
  { holds: 'a scheduled push run that caught up a domain over its limit', file: 'scheduled-push-fda4322.json' },
  { holds: 'an intent export that submitted, polled and downloaded', file: 'intent-export-fda4322.json' },
  {
    holds: 'a webhook delivery that listed its destinations in an activity task',
    file: 'deliver-signal-event-5bc930c.json',
  },
];

describe('histories of earlier releases', () => {
  Runtime.install({ logger: new DefaultLogger('WARN') });

  it.each(HISTORIES)('$holds ($file) replays', { timeout: 120_000 }, async ({ file, workflowId }) => {
    await Worker.runReplayHistory(replayOptions(), await history(file), workflowId);
  });
});
