/**
 * A schedule's alert (`--notify <url>`): one event for a run that failed, stopped on its budget or ended with
 * rejected records, posted through the kit's webhook delivery (`postSigned`: the SSRF-safe dispatcher, typed
 * retryable failures; the workflow's retry policy retries it). Signed as Standard Webhooks sign it with the worker's
 * `SIGNAL_KIT_NOTIFY_SECRET` (never in a workflow); a Slack incoming webhook gets Slack's `{ "text": ... }` instead.
 * The webhook id is fixed by the schedule and the run, so a receiver drops a retried event as a duplicate.
 */
import { ConfigError } from '../connectors/errors.ts';
import { answerFailure, type DeliveryContext, postSigned } from './webhook-delivery.ts';

/** What a run's alert says: which run, how it ended and why, its counts and its files. */
export interface RunAlert {
  /** The alert's endpoint (`--notify`). */
  url: string;
  schedule: string;
  /** The schedule's kind (`push`, a feed's kind, `enrich`, `enrich-contacts`). */
  kind: string;
  runId: string;
  status: 'failed' | 'budget_exhausted' | 'completed_with_errors' | 'rejected_records';
  /** Why, in the kit's words (the file, the row or byte, the column, the fix). */
  reason: string;
  counts?: Record<string, unknown>;
  credits?: number;
  /** The run's files, when it wrote them: its manifest, rows and changes. */
  files?: Record<string, string>;
}

/** The event's type per ending. */
const EVENT_TYPES: Record<RunAlert['status'], string> = {
  failed: 'signal_kit.run.failed',
  budget_exhausted: 'signal_kit.run.budget_exhausted',
  completed_with_errors: 'signal_kit.run.completed_with_errors',
  rejected_records: 'signal_kit.run.rejected_records',
};

/** Slack's incoming webhooks (`https://hooks.slack.com/services/...`) take `{ "text": ... }`. */
export function isSlackWebhook(url: string): boolean {
  const parsed = URL.parse(url);
  return parsed?.hostname === 'hooks.slack.com' && parsed.pathname.startsWith('/services/');
}

/** The alert as Standard Webhooks' payload (`type`, `timestamp`, `data`). */
export function alertEvent(alert: RunAlert, at: Date): { type: string; timestamp: string; data: object } {
  const { url: _url, ...data } = alert;
  return { type: EVENT_TYPES[alert.status], timestamp: at.toISOString(), data };
}

/** The alert as one Slack message. */
export function alertText(alert: RunAlert): string {
  const ended = {
    failed: 'failed',
    budget_exhausted: 'stopped on its credit budget',
    completed_with_errors: 'ended with failed batches',
    rejected_records: 'ended with rejected records',
  };
  const lines = [`signal-kit: ${alert.kind} schedule "${alert.schedule}" run ${alert.runId} ${ended[alert.status]}`];
  lines.push(alert.reason);
  if (alert.counts) lines.push(`counts: ${JSON.stringify(alert.counts)}`);
  if (alert.credits !== undefined) lines.push(`credits charged: ${alert.credits}`);
  for (const [name, url] of Object.entries(alert.files ?? {})) lines.push(`${name}: ${url}`);
  return lines.join('\n');
}

/** Posts one run's alert; a non-2xx answer is a retryable failure (the workflow's retry policy tries again). */
export async function notifyRunOutcome(ctx: DeliveryContext, alert: RunAlert): Promise<{ status: number }> {
  const slack = isSlackWebhook(alert.url);
  const secret = ctx.config.notifySecrets;
  if (!slack && !secret?.length)
    throw new ConfigError('SIGNAL_KIT_NOTIFY_SECRET is not set on the worker: it signs the events of --notify');
  const body = JSON.stringify(slack ? { text: alertText(alert) } : alertEvent(alert, ctx.now()));
  const webhookId = `run_${alert.schedule}_${alert.runId}`.replace(/[^A-Za-z0-9_.-]/g, '_');
  const answer = await postSigned(ctx, { url: alert.url, secret, timeout_ms: 15_000 }, body, webhookId);
  if (answer.status >= 200 && answer.status < 300) return { status: answer.status };
  throw answerFailure(ctx, answer);
}
