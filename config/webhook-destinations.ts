/**
 * The worker's webhook destinations, parsed once with zod: where `signal.created` events go.
 *
 *   SIGNAL_KIT_WEBHOOK_DESTINATIONS='[
 *     {"id":"crm","kind":"http","url":"https://crm.example/hooks/signals","secret":"whsec_...","signal_types":["news"]},
 *     {"id":"lake","kind":"bucket","url":"s3://my-bucket/signals","max_events":1000,"max_age_ms":600000,
 *      "formats":["parquet"]}
 *   ]'
 *   SIGNAL_KIT_WEBHOOK_DEAD_LETTER_URL=s3://my-bucket/webhooks     (dead letters and destination state)
 *   SIGNAL_KIT_WEBHOOK_ALLOWLIST=10.1.0.0/16,127.0.0.1/32            (addresses outbound deliveries may reach)
 */
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import { WebhookConfigError } from '../connectors/errors.ts';
import {
  DESTINATION_ID_PATTERN,
  type Destination,
  type WebhookDeliveryConfig,
} from '../connectors/webhooks/destinations.ts';
import { isWebhookSecret } from '../connectors/webhooks/signature.ts';

const destinationId = z.string().regex(DESTINATION_ID_PATTERN, 'must be 1..63 of a-z 0-9 _ - (starting alphanumeric)');
const signalTypes = z.array(z.string().min(1)).min(1).optional();

const secret = z.string().refine(isWebhookSecret, { message: 'must be whsec_<base64>' });

export const HttpDestinationSchema = z.object({
  id: destinationId,
  kind: z.literal('http'),
  url: z.url({ protocol: /^https?$/, message: 'must be an http(s) URL' }),
  /** One secret, or several during a rotation (each delivery carries one signature per secret). */
  secret: z.union([secret, z.array(secret).min(1)]),
  signal_types: signalTypes,
  /** Per-request timeout (default 15 s). */
  timeout_ms: z.number().int().positive().max(120_000).default(15_000),
});

export const BucketDestinationSchema = z.object({
  id: destinationId,
  kind: z.literal('bucket'),
  /** Base URL of the store: file://, s3://bucket/prefix, gs://bucket/prefix. */
  url: z.string().min(1),
  /** Key prefix inside the store (default none). */
  prefix: z
    .string()
    .regex(/^[A-Za-z0-9_.=/-]*$/)
    .transform((p) => p.replace(/^\/+|\/+$/g, ''))
    .default(''),
  signal_types: signalTypes,
  /** Rotate a part every N events ... */
  max_events: z.number().int().positive().max(100_000).default(1_000),
  /** ... or T milliseconds after the part's first event, whichever comes first. */
  max_age_ms: z
    .number()
    .int()
    .positive()
    .default(10 * 60_000),
  /** Formats of the flat signals table written beside each part (docs/tables.md); none by default. */
  formats: z.array(z.enum(['jsonl', 'csv', 'parquet'])).default([]),
});

export const DestinationSchema = z.discriminatedUnion('kind', [HttpDestinationSchema, BucketDestinationSchema]);

export type DestinationInput = z.input<typeof DestinationSchema>;

export function defaultDeadLetterUrl(cwd: string = process.cwd()): string {
  return pathToFileURL(`${cwd}/.signal-kit/webhooks`).href;
}

export function parseDestinations(input: unknown): Destination[] {
  const result = z.array(DestinationSchema).safeParse(input);
  if (!result.success) {
    const problems = result.error.issues.map((i) => `${i.path.join('.') || '(root)'} ${i.message}`);
    throw new WebhookConfigError(`invalid webhook destinations: ${problems.join('; ')}`);
  }
  const seen = new Set<string>();
  for (const d of result.data) {
    if (seen.has(d.id)) throw new WebhookConfigError(`duplicate webhook destination id ${d.id}`);
    seen.add(d.id);
  }
  return result.data;
}

export function webhookDeliveryConfig(input: {
  destinations: unknown;
  deadLetterUrl?: string | undefined;
  allowlist?: string[] | undefined;
}): WebhookDeliveryConfig {
  return {
    destinations: parseDestinations(input.destinations),
    deadLetterUrl: input.deadLetterUrl || defaultDeadLetterUrl(),
    allowlist: input.allowlist ?? [],
  };
}

/** Reads the `SIGNAL_KIT_WEBHOOK_*` variables (see the top of this file). */
export function webhookDeliveryConfigFromEnv(
  env: Record<string, string | undefined> = process.env,
): WebhookDeliveryConfig {
  let destinations: unknown = [];
  const raw = env['SIGNAL_KIT_WEBHOOK_DESTINATIONS'];
  if (raw) {
    try {
      destinations = JSON.parse(raw);
    } catch (err) {
      throw new WebhookConfigError(`SIGNAL_KIT_WEBHOOK_DESTINATIONS is not JSON: ${(err as Error).message}`);
    }
  }
  const allowlist = (env['SIGNAL_KIT_WEBHOOK_ALLOWLIST'] ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const notifySecrets = (env['SIGNAL_KIT_NOTIFY_SECRET'] ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return {
    ...webhookDeliveryConfig({ destinations, deadLetterUrl: env['SIGNAL_KIT_WEBHOOK_DEAD_LETTER_URL'], allowlist }),
    ...(notifySecrets.length > 0 ? { notifySecrets } : {}),
  };
}
