import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { z } from 'zod';
import { ConfigError } from '../connectors/errors.ts';
import { DEFAULT_API_TASK_QUEUE, DEFAULT_TASK_QUEUE } from '../workflows/constants.ts';
import { loadTemporalConnection } from './temporal.ts';

export { ConfigError };

const positiveInt = z.coerce.number().int().positive();

/**
 * The spool's directory when SIGNAL_KIT_SPOOL_DIR is not set: the user's state directory (XDG Base Directory:
 * `$XDG_STATE_HOME`, else `~/.local/state`), `signal-kit/spool` in it. State, not cache: what it holds was paid for
 * and must survive a restart, and a cache may be cleared at any time. Never a shared folder such as the system's
 * temporary one, where another user could create it first.
 */
export function defaultSpoolDir(env: Env = process.env, home = homedir()): string {
  const state = env.XDG_STATE_HOME;
  // The XDG spec: a relative path in the variable is invalid and is ignored.
  const base = state && isAbsolute(state) ? state : join(home, '.local', 'state');
  return join(base, 'signal-kit', 'spool');
}

/**
 * V8 flags a worker process should start with (`NODE_OPTIONS`): a 16 MiB semi-space keeps V8's young generation from
 * growing to 128 MiB of mostly garbage under bulk answers; the peak dropped by 40–120 MiB at the same CPU in
 * the benchmarks (bench/README.md, "What to plan for"). V8 reads it only at process start, so the worker cannot apply it to itself.
 */
export const WORKER_NODE_OPTIONS = '--max-semi-space-size=16';

const heapSchema = z.object({
  /**
   * How far V8 lets the heap grow past what the last full collection kept, in percent (V8's `--heap-growing-percent`;
   * 0 leaves V8's own factor, up to 4×). Bulk answers leave mostly garbage: 100 (2×) halved the peak above idle on
   * 1M addresses; 50 (1.5×) took another ~40 MiB off enrichment's peak, for 0–9 % more worker CPU per bulk call
   * (verifying 1M addresses: ~9 % more CPU and ~7 % fewer addresses/s; 20: ~27 % more CPU).
   */
  SIGNAL_KIT_HEAP_GROWING_PERCENT: z.coerce.number().int().min(0).max(1000).default(50),
  /**
   * The semi-space of the workflow thread's young generation, in MiB (0: the process's own). Workflows allocate
   * little per activation, yet that isolate grew its young generation to 32 MiB during a bulk job; 4 keeps it at
   * 8 MiB.
   */
  SIGNAL_KIT_WORKFLOW_SEMI_SPACE_MB: z.coerce.number().int().min(0).max(64).default(4),
});

/** The worker process's heap settings (`signal-kit worker` applies them at start: workers/heap.ts). */
export function parseWorkerHeapConfig(env: Env = process.env): {
  heapGrowingPercent: number;
  workflowSemiSpaceMb: number;
} {
  const c = parse(heapSchema, env);
  return {
    heapGrowingPercent: c.SIGNAL_KIT_HEAP_GROWING_PERCENT,
    workflowSemiSpaceMb: c.SIGNAL_KIT_WORKFLOW_SEMI_SPACE_MB,
  };
}

/** `id:base64key` pairs, comma-separated; the first seals new payloads, all open old ones. */
const payloadKeys = z
  .string()
  .transform((value, ctx) => {
    const keys: { id: string; key: Buffer }[] = [];
    for (const entry of value
      .split(',')
      .map((part) => part.trim())
      .filter(Boolean)) {
      const colon = entry.indexOf(':');
      const id = colon > 0 ? entry.slice(0, colon) : 'default';
      const key = Buffer.from(colon > 0 ? entry.slice(colon + 1) : entry, 'base64');
      if (key.length !== 32) {
        ctx.addIssue({ code: 'custom', message: `key "${id}" must be 32 bytes of base64 (openssl rand -base64 32)` });
        return z.NEVER;
      }
      if (keys.some((k) => k.id === id)) {
        ctx.addIssue({
          code: 'custom',
          message: `key id "${id}" is used twice (a key without "id:" is "default"); give each key its own id`,
        });
        return z.NEVER;
      }
      keys.push({ id, key });
    }
    return keys;
  })
  .optional();

/** The kit's own Temporal settings; the connection itself comes from config/temporal.ts (envconfig). */
const temporalSchema = z.object({
  SIGNAL_KIT_TASK_QUEUE: z.string().min(1).default(DEFAULT_TASK_QUEUE),
  SIGNAL_KIT_API_TASK_QUEUE: z.string().min(1).default(DEFAULT_API_TASK_QUEUE),
  /** Encrypts everything Temporal stores (see workers/payload-codec.ts); workers and clients need the same keys. */
  SIGNAL_KIT_PAYLOAD_KEYS: payloadKeys,
  /** Migration switch: read payloads that were never sealed although keys are set (refused otherwise). */
  SIGNAL_KIT_PAYLOAD_ALLOW_PLAINTEXT: z.stringbool().default(false),
});

const apiSchema = z.object({
  SIGNAL_API_URL: z.url({ message: 'must be an http(s) URL' }),
  SIGNAL_API_KEY: z.string().min(1, 'is required'),
  SIGNAL_API_AUTH: z.enum(['x-api-key', 'bearer']).default('x-api-key'),
  /** The account's budget in requests per minute, shared by every worker (spec: 300). */
  SIGNAL_API_RATE_LIMIT: positiveInt.default(300),
  /** The sliding window over which the service counts that budget (a minute unless it says otherwise). */
  SIGNAL_API_RATE_WINDOW_MS: positiveInt.optional(),
  SIGNAL_API_TIMEOUT_MS: positiveInt.default(60_000),
  /**
   * After SIGTERM, how long running activities may finish before they are cancelled (and retried elsewhere);
   * default: the API timeout plus 15 s, so that a bulk call in flight gets its paid answer saved.
   */
  SIGNAL_KIT_SHUTDOWN_GRACE_MS: positiveInt.optional(),
  /**
   * A directory on the worker's own disk where a paid answer goes when the output refuses it (full, read-only,
   * access denied, no such bucket): the job stops, and running it again publishes it from there instead of paying
   * again. Put it on a disk that survives a restart.
   */
  SIGNAL_KIT_SPOOL_DIR: z
    .string()
    .min(1)
    .transform((dir) => resolve(dir))
    .optional(),
});

export type TemporalConfig = ReturnType<typeof parseTemporalConfig>;
export type ApiConfig = ReturnType<typeof parseApiConfig>;
export type WorkerConfig = TemporalConfig & ApiConfig;

type Env = Record<string, string | undefined>;

function parse<T extends z.ZodType>(schema: T, env: Env): z.output<T> {
  const result = schema.safeParse(env);
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => `${issue.path.join('.') || '(root)'} ${issue.message}`);
  throw new ConfigError(`invalid configuration: ${problems.join('; ')}`);
}

export function parseTemporalConfig(env: Env = process.env) {
  const c = parse(temporalSchema, env);
  return {
    ...loadTemporalConnection(env),
    taskQueue: c.SIGNAL_KIT_TASK_QUEUE,
    apiTaskQueue: c.SIGNAL_KIT_API_TASK_QUEUE,
    ...(c.SIGNAL_KIT_PAYLOAD_KEYS ? { payloadKeys: c.SIGNAL_KIT_PAYLOAD_KEYS } : {}),
    ...(c.SIGNAL_KIT_PAYLOAD_ALLOW_PLAINTEXT ? { allowPlaintextPayloads: true } : {}),
  };
}

export function parseApiConfig(env: Env = process.env) {
  const c = parse(apiSchema, env);
  return {
    url: c.SIGNAL_API_URL,
    apiKey: c.SIGNAL_API_KEY,
    auth: c.SIGNAL_API_AUTH,
    ratePerMinute: c.SIGNAL_API_RATE_LIMIT,
    ...(c.SIGNAL_API_RATE_WINDOW_MS ? { rateWindowMs: c.SIGNAL_API_RATE_WINDOW_MS } : {}),
    timeoutMs: c.SIGNAL_API_TIMEOUT_MS,
    ...(c.SIGNAL_KIT_SHUTDOWN_GRACE_MS ? { shutdownGraceMs: c.SIGNAL_KIT_SHUTDOWN_GRACE_MS } : {}),
    // Optional in the type: a config built by hand (tests) leaves it to the worker's default.
    ...({ spoolDir: c.SIGNAL_KIT_SPOOL_DIR ?? defaultSpoolDir(env) } as { spoolDir?: string }),
  };
}

export function parseWorkerConfig(env: Env = process.env): WorkerConfig {
  return { ...parseTemporalConfig(env), ...parseApiConfig(env) };
}
