import type { WebhookSubscriptionRequest } from '../../activities/webhook-subscriptions.ts';
import { parseTemporalConfig } from '../../config/worker.ts';
import { SignalApiError, ValidationError } from '../../connectors/errors.ts';
import type { UpdateWebhookParams } from '../../connectors/signal-api/types.ts';
import { list, UsageError } from '../args.ts';
import { callThroughWorker, NoWorkerError, type ServeOptions, startWebhookIntake } from '../webhook-service.ts';

/**
 * `signal-kit webhooks …`: the intake (`serve`: signal.created events in, one durable `deliverSignalEvent` workflow
 * per signal id) and the management of the service's subscriptions (`subscribe`, `list`, `update`, `delete`, `test`).
 */

// ─── serve ─────────────────────────────────────────────────────────────────────────────────────────────────────

// The intake itself (its authentication from the environment, the receiver wired to Temporal) lives in
// config/webhooks.ts and cli/webhook-service.ts; this command only checks its flags, starts it and waits for a signal.

/** `webhooks serve`'s flags, as commander hands them over (declared in cli/program.ts). */
export interface ServeFlags {
  port?: string;
  host?: string;
  path?: string;
  auth?: string;
  allowUnauthenticated?: boolean;
}

/** `webhooks serve`'s flags, checked (each mistake a `UsageError` naming its flag), with their defaults. */
export function parseServe(flags: ServeFlags): ServeOptions {
  const values = { host: '127.0.0.1', path: '/webhooks', auth: 'signature', ...flags };
  if (values.port === undefined) throw new UsageError('--port is required (0 picks a free port)');
  const port = Number(values.port);
  if (!/^\d+$/.test(values.port) || port > 65_535) {
    throw new UsageError(`--port must be an integer from 0 to 65535, got "${values.port}"`);
  }
  if (!values.host) throw new UsageError('--host must not be empty');
  if (!/^\/[A-Za-z0-9._~!$&'()*+,;=:@/-]*$/.test(values.path)) {
    throw new UsageError(`--path must be an absolute URL path such as /webhooks, got "${values.path}"`);
  }
  const auth = values.auth;
  if (auth !== 'signature' && auth !== 'token' && auth !== 'none') {
    throw new UsageError(`--auth must be one of signature, token, none, got "${auth}"`);
  }
  const allowUnauthenticated = values.allowUnauthenticated === true;
  if (auth === 'none' && !allowUnauthenticated) {
    throw new UsageError('--auth none accepts events from anyone; add --allow-unauthenticated to mean it');
  }
  if (auth !== 'none' && allowUnauthenticated) {
    throw new UsageError('--allow-unauthenticated applies only to --auth none');
  }
  return { port, host: values.host, path: values.path, auth, allowUnauthenticated };
}

/** `signal-kit webhooks serve`: the intake, until SIGINT or SIGTERM. */
export async function runServeCommand(flags: ServeFlags, print: (text: string) => void = console.log): Promise<number> {
  const serve = parseServe(flags);
  const temporal = parseTemporalConfig();
  const intake = await startWebhookIntake({
    serve,
    temporal,
    log: (entry) => console.error(JSON.stringify({ webhook: entry })),
  });
  const { receiver } = intake;
  print(
    JSON.stringify({
      listening: true,
      url: receiver.url,
      webhookUrl: receiver.webhookUrl,
      port: receiver.port,
      auth: serve.auth,
      temporal: `${temporal.address}/${temporal.namespace}`,
      taskQueue: temporal.taskQueue,
    }),
  );
  if (serve.auth === 'none')
    console.error('signal-kit webhooks serve: WARNING: events are accepted without authentication');
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGINT', () => resolve('SIGINT'));
    process.once('SIGTERM', () => resolve('SIGTERM'));
  });
  console.error(`signal-kit webhooks serve: ${signal}, closing`);
  await intake.close();
  return 0;
}

// ─── subscriptions ─────────────────────────────────────────────────────────────────────────────────────────────

/** The flag each request field of the subscription endpoints comes from (the service names fields, we name flags). */
const FLAG_OF_FIELD: Record<string, string> = {
  url: '--url',
  signal_types: '--types',
  description: '--description',
  status: '--status',
  webhook_id: 'ID',
};

function webhookUrl(value: string | undefined, required: boolean): string | undefined {
  if (value === undefined) {
    if (required) throw new UsageError('--url is required');
    return undefined;
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`--url must be an absolute http(s) URL, got "${value}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(`--url must be an absolute http(s) URL, got "${value}"`);
  }
  return value;
}

function signalTypes(value: string | undefined, required: boolean): string[] | undefined {
  if (value === undefined) {
    if (required) throw new UsageError('--types is required (comma-separated signal types)');
    return undefined;
  }
  const types = list(value);
  if (!types) throw new UsageError('--types must name at least one signal type');
  return types;
}

/** A parsed management subcommand: the call to make, and how to judge its answer. */
export interface ManageAction {
  request: WebhookSubscriptionRequest;
  judge?: (result: Record<string, unknown>) => { exitCode: number; problem: string } | undefined;
}

/** The management subcommands; commander has checked which flags and arguments each one takes. */
export type ManageSubcommand = 'subscribe' | 'list' | 'update' | 'delete' | 'test';

/** `webhooks subscribe|update`'s flags, as commander hands them over. */
export interface ManageFlags {
  url?: string;
  types?: string;
  description?: string;
  status?: string;
}

/** A management subcommand's flags as the call to make, checked completely before anything is sent. */
export function manageAction(sub: ManageSubcommand, id: string | undefined, flags: ManageFlags = {}): ManageAction {
  const webhookId = () => {
    if (!id) throw new UsageError(`usage: signal-kit webhooks ${sub} ID`);
    return id;
  };
  switch (sub) {
    case 'subscribe': {
      const params = {
        url: webhookUrl(flags.url, true)!,
        signal_types: signalTypes(flags.types, true)!,
        ...(flags.description !== undefined ? { description: flags.description } : {}),
      };
      return { request: { action: 'subscribe', params } };
    }
    case 'list':
      return { request: { action: 'list' } };
    case 'update': {
      const target = webhookId();
      const params: UpdateWebhookParams = {};
      const url = webhookUrl(flags.url, false);
      if (url !== undefined) params.url = url;
      const types = signalTypes(flags.types, false);
      if (types) params.signal_types = types;
      if (flags.description !== undefined) params.description = flags.description;
      if (flags.status !== undefined) {
        if (flags.status !== 'active' && flags.status !== 'paused') {
          throw new UsageError(`--status must be active or paused, got "${flags.status}"`);
        }
        params.status = flags.status;
      }
      if (!Object.keys(params).length) {
        throw new UsageError('webhooks update needs at least one of --url, --types, --description, --status');
      }
      return { request: { action: 'update', id: target, params } };
    }
    case 'delete':
      return { request: { action: 'delete', id: webhookId() } };
    case 'test':
      return {
        request: { action: 'test', id: webhookId() },
        judge: (result) => {
          if (result.delivered) return undefined;
          const why = [result.status_code ? `answered ${result.status_code}` : undefined, result.error]
            .filter(Boolean)
            .join(', ');
          return { exitCode: 1, problem: `the test event was not delivered${why ? ` (${why})` : ''}` };
        },
      };
  }
}

/** One line naming what failed: the flag (for a field the service rejected), the status, code and request id. */
export function describeApiError(error: SignalApiError): string {
  // `signal_types.0` or `signal_types[0]` is still about --types.
  const field = error.field?.split(/[.[]/)[0];
  const flag = field ? (FLAG_OF_FIELD[field] ?? error.field) : undefined;
  const facts = [
    error.status && !error.message.includes(String(error.status)) ? `HTTP ${error.status}` : undefined,
    error.code,
    error.requestId ? `request ${error.requestId}` : undefined,
  ].filter(Boolean);
  return `${flag ? `${flag}: ` : ''}${error.message} (${facts.join(', ')})`;
}

export interface WebhooksCommandDeps {
  /** Makes the call (tests); otherwise a worker makes it on the API queue (`callThroughWorker`). */
  call?: (request: WebhookSubscriptionRequest) => Promise<Record<string, unknown>>;
  print?: (text: string) => void;
  printError?: (text: string) => void;
}

/** `signal-kit webhooks subscribe|list|update|delete|test`: one call through a worker, its answer printed as JSON. */
export async function runManageCommand(
  sub: ManageSubcommand,
  id: string | undefined,
  flags: ManageFlags,
  deps: WebhooksCommandDeps = {},
): Promise<number> {
  const print = deps.print ?? ((text: string) => console.log(text));
  const printError = deps.printError ?? ((text: string) => console.error(text));
  const action = manageAction(sub, id, flags);
  const call = deps.call ?? ((request: WebhookSubscriptionRequest) => callThroughWorker(request));
  try {
    const result = await call(action.request);
    print(JSON.stringify(result, null, 2));
    const verdict = action.judge?.(result);
    if (verdict) printError(`signal-kit webhooks ${sub}: ${verdict.problem}`);
    return verdict?.exitCode ?? 0;
  } catch (error) {
    if (error instanceof NoWorkerError) {
      printError(`signal-kit webhooks ${sub}: ${error.message}`);
      return 1;
    }
    if (!(error instanceof SignalApiError)) throw error;
    printError(`signal-kit webhooks ${sub}: ${describeApiError(error)}`);
    // A request the service (or the client's own checks) refused as invalid is a usage mistake.
    return error instanceof ValidationError ? 2 : 1;
  }
}
