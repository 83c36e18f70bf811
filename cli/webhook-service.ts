import { constants, generateKeyPairSync, privateDecrypt } from 'node:crypto';
import { ActivityFailure, ApplicationFailure, type Client, WorkflowFailedError } from '@temporalio/client';
import { WEBHOOK_API_ERROR, type WebhookSubscriptionRequest } from '../activities/webhook-subscriptions.ts';
import { receiverAuthFromEnv, type ServeAuthMode } from '../config/webhooks.ts';
import { parseTemporalConfig, type TemporalConfig } from '../config/worker.ts';
import { NoWorkerError, SignalApiError, ValidationError } from '../connectors/errors.ts';
import { type ReceiverLogEntry, startWebhookReceiver, temporalEnqueue, type WebhookReceiver } from '../intake/index.ts';
import { runChecks } from '../workers/health.ts';
import { temporalAnswers } from '../workers/temporal-health.ts';
import { manageWebhooks } from '../workflows/webhook-subscriptions.ts';
import { connectClient } from './temporal.ts';
import { runThroughWorker } from './worker-call.ts';

// The webhooks service behind `signal-kit webhooks …`: the intake (`serve`), and the subscriptions
// (`subscribe|list|update|delete|test`), whose every call is made by a worker (with its API key, on the rate-limited
// API queue), never by the CLI itself.

/**
 * Runs one management call through a worker: a `manageWebhooks` workflow whose activity runs on the rate-limited
 * API queue with the worker's API key. A new subscription's secret travels sealed to a key pair made for this
 * command only, and is opened here.
 */
export async function callThroughWorker(
  request: WebhookSubscriptionRequest,
  temporal: TemporalConfig = parseTemporalConfig(),
): Promise<Record<string, unknown>> {
  const keys = request.action === 'subscribe' ? generateKeyPairSync('rsa', { modulusLength: 2048 }) : undefined;
  const sealed: WebhookSubscriptionRequest =
    request.action === 'subscribe' && keys
      ? { ...request, sealSecretFor: keys.publicKey.export({ type: 'spki', format: 'pem' }).toString() }
      : request;
  const client = await connectClient(temporal);
  try {
    const result = await runThroughWorker(client, temporal, manageWebhooks, `webhooks-${request.action}`, {
      request: sealed,
      apiTaskQueue: temporal.apiTaskQueue,
    });
    if (keys && typeof result.sealed_secret === 'string') {
      const { sealed_secret: box, ...rest } = result;
      const secret = privateDecrypt(
        { key: keys.privateKey, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' },
        Buffer.from(box as string, 'base64'),
      ).toString();
      return { ...rest, secret };
    }
    return result;
  } catch (error) {
    throw apiErrorOf(error) ?? error;
  } finally {
    await client.connection.close();
  }
}

export { NoWorkerError };

/** The service's refusal carried in a workflow failure, rebuilt as the client's typed error. */
export function apiErrorOf(error: unknown, type: string = WEBHOOK_API_ERROR): SignalApiError | undefined {
  let cause: unknown = error instanceof WorkflowFailedError ? error.cause : undefined;
  while (cause instanceof ActivityFailure && cause.cause) cause = cause.cause;
  if (!(cause instanceof ApplicationFailure) || cause.type !== type) return undefined;
  const info = (cause.details?.[0] ?? {}) as Partial<Record<string, unknown>>;
  const init = {
    status: Number(info.status ?? 0),
    code: String(info.code ?? 'error'),
    message: String(info.message ?? cause.message),
    requestId: typeof info.requestId === 'string' ? info.requestId : undefined,
    field: typeof info.field === 'string' ? info.field : undefined,
  };
  return info.name === 'ValidationError' ? new ValidationError(init) : new SignalApiError(init);
}

// ─── the intake (`webhooks serve`) ─────────────────────────────────────────────────────────────────────────────

/** Where and how the intake listens (`webhooks serve`'s flags, checked). */
export interface ServeOptions {
  port: number;
  host: string;
  path: string;
  auth: ServeAuthMode;
  allowUnauthenticated: boolean;
}

export interface WebhookIntake {
  receiver: WebhookReceiver;
  taskQueue: string;
  /** Stops accepting events, then closes the Temporal connection (unless the client was given). */
  close(): Promise<void>;
}

/**
 * The intake wired to Temporal (programmatic form of `webhooks serve`): each accepted `signal.created` event
 * starts `deliverSignalEvent` with workflow id `signal-<signal id>` on the configured task queue, and the sender
 * gets its 2xx only after Temporal accepted the start (a redelivery is acknowledged as a duplicate).
 */
export async function startWebhookIntake(options: {
  serve: ServeOptions;
  env?: Record<string, string | undefined>;
  temporal?: TemporalConfig;
  /** A connected client (tests); otherwise one is connected from `temporal` and closed by `close()`. */
  client?: Client;
  log?: (entry: ReceiverLogEntry) => void;
}): Promise<WebhookIntake> {
  const { serve } = options;
  const env = options.env ?? process.env;
  const auth = receiverAuthFromEnv(serve.auth, env);
  const temporal = options.temporal ?? parseTemporalConfig(env);
  const client = options.client ?? (await connectClient(temporal));
  try {
    const receiver = await startWebhookReceiver({
      port: serve.port,
      host: serve.host,
      path: serve.path,
      auth,
      allowUnauthenticated: serve.allowUnauthenticated,
      enqueue: temporalEnqueue({ client, taskQueue: temporal.taskQueue }),
      readiness: () => runChecks({ temporal: () => temporalAnswers(client.connection, temporal.address) }),
      ...(options.log ? { log: options.log } : {}),
    });
    return {
      receiver,
      taskQueue: temporal.taskQueue,
      async close() {
        await receiver.close();
        if (!options.client) await client.connection.close();
      },
    };
  } catch (error) {
    if (!options.client) await client.connection.close();
    throw error;
  }
}
