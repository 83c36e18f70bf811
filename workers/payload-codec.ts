import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type { DataConverter, Payload, PayloadCodec } from '@temporalio/common';
import { PayloadDecryptionError } from '../connectors/errors.ts';

const ENCODING = 'binary/encrypted';
const CIPHER = 'aes-256-gcm';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** The migration switch: while set, payloads that were never sealed are read as they are. */
export const ALLOW_PLAINTEXT_ENV = 'SIGNAL_KIT_PAYLOAD_ALLOW_PLAINTEXT';

export interface EncryptionCodecOptions {
  /**
   * Read payloads that were never sealed (default false: they are refused). Only for the migration of a namespace
   * that ran without keys; a process without the keys would otherwise put contact data in history unnoticed.
   */
  allowPlaintext?: boolean;
}

export interface PayloadKey {
  id: string;
  /** 32 bytes. */
  key: Buffer;
}

/**
 * Encrypts every payload Temporal stores (workflow arguments, results, signals, queries) with AES-256-GCM, so that
 * contact data in webhook events never sits in history in the clear. New payloads use the first key; older keys
 * listed after it still decrypt what they sealed (rotation). Metadata travels inside the sealed box too.
 */
export class EncryptionCodec implements PayloadCodec {
  private readonly current: PayloadKey;
  private readonly keys: Map<string, Buffer>;
  private readonly allowPlaintext: boolean;

  constructor(keys: [PayloadKey, ...PayloadKey[]], options: EncryptionCodecOptions = {}) {
    for (const { id, key } of keys) {
      if (key.length !== 32) throw new Error(`payload key "${id}" must be 32 bytes, got ${key.length}`);
    }
    const duplicate = duplicateKeyId(keys);
    // Two keys under one id: what the first sealed, the second would be asked to open.
    if (duplicate !== undefined) throw new Error(`payload key id "${duplicate}" is used by more than one key`);
    this.current = keys[0];
    this.keys = new Map(keys.map(({ id, key }) => [id, key]));
    this.allowPlaintext = options.allowPlaintext === true;
  }

  async encode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => {
      const plain = Buffer.from(JSON.stringify(toPortable(payload)));
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv(CIPHER, this.current.key, iv);
      const sealed = Buffer.concat([iv, cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
      return {
        metadata: { encoding: Buffer.from(ENCODING), 'encryption-key-id': Buffer.from(this.current.id) },
        data: sealed,
      };
    });
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => {
      if (Buffer.from(payload.metadata?.['encoding'] ?? []).toString() !== ENCODING) {
        if (this.allowPlaintext) return payload;
        throw new PayloadDecryptionError(
          `a payload is not encrypted although payload keys are configured (was it written by a process without ` +
            `SIGNAL_KIT_PAYLOAD_KEYS?); set ${ALLOW_PLAINTEXT_ENV}=true only while migrating a namespace`,
        );
      }
      const id = Buffer.from(payload.metadata?.['encryption-key-id'] ?? []).toString();
      const key = this.keys.get(id);
      if (!key) throw new PayloadDecryptionError(`no payload key with id "${id}" is configured`);
      const data = Buffer.from(payload.data ?? []);
      try {
        const decipher = createDecipheriv(CIPHER, key, data.subarray(0, IV_BYTES));
        decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
        const plain = Buffer.concat([
          decipher.update(data.subarray(IV_BYTES, data.length - TAG_BYTES)),
          decipher.final(),
        ]);
        return fromPortable(JSON.parse(plain.toString()) as PortablePayload);
      } catch (error) {
        throw new PayloadDecryptionError(
          `payload sealed with key "${id}" could not be opened: ${(error as Error).message}`,
        );
      }
    });
  }
}

interface PortablePayload {
  metadata: Record<string, string>;
  data: string;
}

function toPortable(payload: Payload): PortablePayload {
  const metadata: Record<string, string> = {};
  for (const [name, value] of Object.entries(payload.metadata ?? {})) {
    metadata[name] = Buffer.from(value ?? []).toString('base64');
  }
  return { metadata, data: Buffer.from(payload.data ?? []).toString('base64') };
}

function fromPortable(portable: PortablePayload): Payload {
  const metadata: Record<string, Uint8Array> = {};
  for (const [name, value] of Object.entries(portable.metadata)) metadata[name] = Buffer.from(value, 'base64');
  return { metadata, data: Buffer.from(portable.data, 'base64') };
}

/** The first key id used twice, if any. */
export function duplicateKeyId(keys: readonly PayloadKey[]): string | undefined {
  const seen = new Set<string>();
  for (const { id } of keys) {
    if (seen.has(id)) return id;
    seen.add(id);
  }
  return undefined;
}

/** The module that exports the failure converter which moves messages and stack traces into sealed payloads. */
export function failureConverterPath(): string {
  const extension = import.meta.url.endsWith('.ts') ? 'ts' : 'js';
  return fileURLToPath(new URL(`./failure-converter.${extension}`, import.meta.url));
}

/**
 * The data converter of workers and clients: when keys are configured, payloads sealed and failure messages and
 * stack traces encoded into (sealed) payloads; Temporal's default otherwise.
 */
export function dataConverterFor(
  keys: PayloadKey[] | undefined,
  options: EncryptionCodecOptions = {},
): DataConverter | undefined {
  if (!keys || keys.length === 0) return undefined;
  return {
    payloadCodecs: [new EncryptionCodec(keys as [PayloadKey, ...PayloadKey[]], options)],
    failureConverterPath: failureConverterPath(),
  };
}
