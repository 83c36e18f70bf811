/**
 * What the scheduled-push promise tests share: starting a run on the real workers, reading a run's manifest and
 * manifested parts as a consumer of the bucket would, and the sandbox's truth about which signals a run should
 * have written.
 */
import { gunzipSync } from 'node:zlib';
import { expect } from 'vitest';
import type { PushManifest, PushResult } from '../../activities/push/types.ts';
import type { Store } from '../../connectors/storage/index.ts';
import type { JobEnv } from '../../devstack/job-env.ts';
import type { Sandbox } from '../../sandbox/index.ts';
import type { ScheduledPushInput } from '../../workflows/scheduled-push.ts';
import { BULK_DOMAINS, PATHS } from './oracle.ts';

export interface PushLineRead {
  domain: string;
  signal_id: string;
  detected_at: string;
}

/** Runs one push workflow to its end on the env's workers. */
export function runPush(
  env: JobEnv,
  workflowId: string,
  input: Omit<ScheduledPushInput, 'taskQueue' | 'apiTaskQueue'>,
): Promise<PushResult> {
  const c = env.config();
  return env.client.workflow.execute('scheduledPush', {
    workflowId,
    taskQueue: c.taskQueue,
    args: [{ ...input, taskQueue: c.taskQueue, apiTaskQueue: c.apiTaskQueue }],
  }) as Promise<PushResult>;
}

/** A run's manifest and the lines of its manifested parts (each part's line count checked). */
export async function readPushRun(
  store: Store,
  result: PushResult,
): Promise<{ manifest: PushManifest; lines: PushLineRead[] }> {
  const prefix = `${result.name}/signals/dt=${result.dt}/run-${result.runId}/`;
  const manifest = JSON.parse(await store.readText(`${prefix}_manifest.json`)) as PushManifest;
  const lines: PushLineRead[] = [];
  for (const part of manifest.parts) {
    expect(part.key.startsWith(prefix)).toBe(true);
    const chunks: Buffer[] = [];
    for await (const chunk of await store.openRead(part.key)) chunks.push(chunk as Buffer);
    const text = gunzipSync(Buffer.concat(chunks)).toString('utf8');
    const partLines = text.split('\n').filter(Boolean);
    expect(partLines).toHaveLength(part.lines);
    for (const line of partLines) lines.push(JSON.parse(line) as PushLineRead);
  }
  return { manifest, lines };
}

/** The truth of one run: the signals detected in (after, clock] (before `before` for a backfill) per domain. */
export function newSignals(
  sandbox: Sandbox,
  domains: string[],
  window: { detected_after?: string | number; detected_before?: string | number; signal_types?: string[] },
): { ids: string[]; perDomain: Map<string, number>; valid: number } {
  const truth = sandbox.truth.companySignals(domains, window);
  const perDomain = new Map<string, number>();
  for (const t of truth) if (t.status === 'ok') perDomain.set(t.domain, t.signals.length);
  return {
    ids: truth.flatMap((t) => t.signals.map((s) => s.signal_id)),
    perDomain,
    valid: truth.filter((t) => t.status !== 'invalid').length,
  };
}

/** Bulk enrich calls since a mark, counted from the sandbox's record of calls (not from ledger entries). */
export function bulkCallsSince(sandbox: Sandbox, mark: number): number {
  return sandbox.truth.calls({ after: mark, path: PATHS.enrichBulk }).length;
}

/** Credits the sandbox charged since a mark. */
export function chargedSince(sandbox: Sandbox, mark: number): number {
  return sandbox.truth.calls({ after: mark }).reduce((sum, call) => sum + call.credits, 0);
}

/**
 * The calls a run may make: one per 100 distinct domains, one more when the leftovers of several watermark groups
 * or new domains share a call, and the catch-up calls for the domains that had more new signals than `limit`.
 */
export function allowedCalls(valid: number, overLimit: number): number {
  return Math.ceil(valid / BULK_DOMAINS) + 1 + Math.ceil(overLimit / BULK_DOMAINS);
}

export function sorted(ids: Iterable<string>): string[] {
  return [...ids].sort();
}
