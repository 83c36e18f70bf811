/**
 * The settings of the S3 and GCS stores, from the standard AWS and Google variables and the kit's own
 * `SIGNAL_KIT_S3_*`, parsed here once per process edge; the stores in connectors/storage/ take the parsed settings
 * and read no variable themselves.
 */
import { z } from 'zod';
import { StorageConfigError } from '../connectors/storage/errors.ts';
import {
  openStoreWith,
  type StorageSettings,
  type OpenStoreOptions as StoreOptions,
} from '../connectors/storage/index.ts';
import type { S3Encryption } from '../connectors/storage/s3.ts';
import type { Store } from '../connectors/storage/store.ts';

type Env = Record<string, string | undefined>;

/** Empty variables count as unset, as the SDKs treat them. */
const optional = z
  .string()
  .optional()
  .transform((value) => value || undefined);

const SSE_MODES = ['AES256', 'aws:kms', 'aws:kms:dsse'] as const;

const schema = z.object({
  AWS_ENDPOINT_URL_S3: optional,
  AWS_ENDPOINT_URL: optional,
  AWS_REGION: optional,
  AWS_DEFAULT_REGION: optional,
  AWS_ACCESS_KEY_ID: optional,
  AWS_SECRET_ACCESS_KEY: optional,
  AWS_SESSION_TOKEN: optional,
  /**
   * `true` keeps every body signed, for buckets whose policy refuses unsigned payloads (a condition on
   * `s3:x-amz-content-sha256`); by default checksummed bodies go unsigned.
   */
  SIGNAL_KIT_S3_SIGNED_PAYLOAD: optional.refine((v) => v === undefined || v === 'true' || v === 'false', {
    error: (issue) => `SIGNAL_KIT_S3_SIGNED_PAYLOAD must be true or false, got "${issue.input}"`,
  }),
  /** `AES256`, `aws:kms` or `aws:kms:dsse`; a `SIGNAL_KIT_S3_KMS_KEY_ID` alone means `aws:kms`. */
  SIGNAL_KIT_S3_SSE: optional.refine((v) => v === undefined || (SSE_MODES as readonly string[]).includes(v), {
    error: (issue) => `SIGNAL_KIT_S3_SSE must be one of ${SSE_MODES.join(', ')}, got "${issue.input}"`,
  }),
  SIGNAL_KIT_S3_KMS_KEY_ID: optional,
  GOOGLE_CLOUD_PROJECT: optional,
  GCLOUD_PROJECT: optional,
  /** An emulator without credentials; a bare host:port means plain HTTP. */
  STORAGE_EMULATOR_HOST: optional,
});

/**
 * S3: the endpoint from AWS_ENDPOINT_URL_S3 (or AWS_ENDPOINT_URL), the region from AWS_REGION (or
 * AWS_DEFAULT_REGION), keys from AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY/AWS_SESSION_TOKEN (without them the SDK's
 * default chains apply), server-side encryption from SIGNAL_KIT_S3_SSE/SIGNAL_KIT_S3_KMS_KEY_ID (none: the bucket's
 * default applies). GCS: STORAGE_EMULATOR_HOST or application default credentials, the project from
 * GOOGLE_CLOUD_PROJECT or GCLOUD_PROJECT. A bad value is a StorageConfigError naming its variable.
 */
export function parseStorageSettings(env: Env = process.env): StorageSettings {
  const result = schema.safeParse(env);
  if (!result.success) throw new StorageConfigError(result.error.issues.map((issue) => issue.message).join('; '));
  const c = result.data;
  const endpoint = c.AWS_ENDPOINT_URL_S3 ?? c.AWS_ENDPOINT_URL;
  const region = c.AWS_REGION ?? c.AWS_DEFAULT_REGION;
  const credentials =
    c.AWS_ACCESS_KEY_ID && c.AWS_SECRET_ACCESS_KEY
      ? {
          accessKeyId: c.AWS_ACCESS_KEY_ID,
          secretAccessKey: c.AWS_SECRET_ACCESS_KEY,
          sessionToken: c.AWS_SESSION_TOKEN,
        }
      : undefined;
  const projectId = c.GOOGLE_CLOUD_PROJECT ?? c.GCLOUD_PROJECT;
  const emulator = c.STORAGE_EMULATOR_HOST;
  return {
    s3: {
      ...(endpoint ? { endpoint } : {}),
      ...(region ? { region } : {}),
      ...(credentials ? { credentials } : {}),
      signedPayload: c.SIGNAL_KIT_S3_SIGNED_PAYLOAD === 'true',
      encryption: s3Encryption(c.SIGNAL_KIT_S3_SSE, c.SIGNAL_KIT_S3_KMS_KEY_ID),
    },
    gcs: emulator
      ? {
          apiEndpoint: /^https?:\/\//.test(emulator) ? emulator : `http://${emulator}`,
          projectId: projectId ?? 'signal-kit',
        }
      : projectId
        ? { projectId }
        : {},
  };
}

function s3Encryption(mode: string | undefined, kmsKeyId: string | undefined): S3Encryption | null {
  if (!mode && !kmsKeyId) return null;
  const sse = (mode ?? 'aws:kms') as S3Encryption['serverSideEncryption'];
  if (kmsKeyId && sse === 'AES256') {
    throw new StorageConfigError(
      'SIGNAL_KIT_S3_KMS_KEY_ID needs SIGNAL_KIT_S3_SSE=aws:kms (or aws:kms:dsse), not AES256',
    );
  }
  return { serverSideEncryption: sse, ...(kmsKeyId ? { kmsKeyId } : {}) };
}

/** What `openStore` takes: the stores' own options, and where the variables are read from (default process.env). */
export type OpenStoreOptions = StoreOptions & { env?: Env };

/**
 * The store for a `file://` URL or plain path, an `s3://bucket/prefix` or a `gs://bucket/prefix` URL, configured
 * from `options.env` (default: the process's environment).
 */
export function openStore(url: string, options: OpenStoreOptions = {}): Store {
  const { env, ...rest } = options;
  return openStoreWith(url, () => parseStorageSettings(env), rest);
}

/**
 * An opener for a long-lived process (the worker): the environment is parsed once, when the first bucket URL needs
 * it, and every store after that uses the same settings.
 */
export function storeOpener(env: Env = process.env): (url: string) => Store {
  let settings: StorageSettings | undefined;
  const settled = () => {
    settings ??= parseStorageSettings(env);
    return settings;
  };
  return (url) => openStoreWith(url, settled);
}
