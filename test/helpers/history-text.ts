/**
 * A workflow history as text a search can find a secret in. The history API returns every payload (arguments,
 * results, failures' encoded attributes, headers, memos) as bytes, and `JSON.stringify` shows those bytes as base64:
 * a key inside a workflow input would not be seen. Here every payload is decoded as the kit reads it back: through
 * the payload codecs (encryption) when given, then the default payload converter, and put back in place as its value.
 */
import { defaultPayloadConverter, type Payload, type PayloadCodec } from '@temporalio/common';

export interface DecodedHistory {
  /** The history as JSON with every payload replaced by its decoded value (or its raw bytes if it cannot be). */
  text: string;
  /** Payloads found and decoded. */
  payloads: number;
  /** Payloads that could not be decoded (sealed without the key, or an encoding the converter does not know). */
  undecoded: number;
}

function isBytes(value: unknown): value is Uint8Array {
  return value instanceof Uint8Array;
}

/** A payload as the history API returns it: metadata of bytes (at least `encoding`) and optional data. */
function isPayload(node: object): node is Payload {
  const metadata = (node as { metadata?: unknown }).metadata;
  return (
    metadata !== null &&
    typeof metadata === 'object' &&
    isBytes((metadata as Record<string, unknown>)['encoding']) &&
    ((node as { data?: unknown }).data === undefined ||
      (node as { data?: unknown }).data === null ||
      isBytes((node as { data?: unknown }).data))
  );
}

export async function decodeHistory(history: unknown, codecs: PayloadCodec[] = []): Promise<DecodedHistory> {
  let payloads = 0;
  let undecoded = 0;
  const decode = async (payload: Payload): Promise<unknown> => {
    payloads += 1;
    let decoded = [payload];
    for (const codec of [...codecs].reverse()) decoded = await codec.decode(decoded);
    try {
      return { decoded: defaultPayloadConverter.fromPayload(decoded[0]!) };
    } catch {
      undecoded += 1;
      return { undecoded: Buffer.from(decoded[0]!.data ?? new Uint8Array()).toString('latin1') };
    }
  };
  const walk = async (node: unknown): Promise<unknown> => {
    if (isBytes(node)) return Buffer.from(node).toString('latin1');
    if (Array.isArray(node)) return Promise.all(node.map(walk));
    if (node === null || typeof node !== 'object') return node;
    if (isPayload(node)) return decode(node);
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(node)) {
      // Long values (protobuf int64) print as numbers; everything else is walked.
      out[key] = typeof (value as { toNumber?: unknown })?.toNumber === 'function' ? String(value) : await walk(value);
    }
    return out;
  };
  const text = JSON.stringify(await walk(history));
  return { text, payloads, undecoded };
}
