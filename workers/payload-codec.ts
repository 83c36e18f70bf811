import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { DataConverter, Payload, PayloadCodec } from '@temporalio/common';

const ENCODING = 'binary/encrypted';
const CIPHER = 'aes-256-gcm';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** A payload the codec cannot open: unknown key id, or data altered since it was sealed. */
export class PayloadDecryptionError extends Error {
  override readonly name = 'PayloadDecryptionError';
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

  constructor(keys: [PayloadKey, ...PayloadKey[]]) {
    for (const { id, key } of keys) {
      if (key.length !== 32) throw new Error(`payload key "${id}" must be 32 bytes, got ${key.length}`);
    }
    this.current = keys[0];
    this.keys = new Map(keys.map(({ id, key }) => [id, key]));
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
      if (Buffer.from(payload.metadata?.['encoding'] ?? []).toString() !== ENCODING) return payload;
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

/** The data converter of workers and clients: encryption when keys are configured, Temporal's default otherwise. */
export function dataConverterFor(keys: PayloadKey[] | undefined): DataConverter | undefined {
  if (!keys || keys.length === 0) return undefined;
  return { payloadCodecs: [new EncryptionCodec(keys as [PayloadKey, ...PayloadKey[]])] };
}
