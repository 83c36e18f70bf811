/**
 * The load's converter thread: turns the parts it is sent (bytes already checked against the manifest) into COPY
 * text (part-copy.ts) and sends the chunks back as they are made, handing their memory over rather than copying it.
 * Parts are converted one after the other, in the order they were sent.
 */
import { parentPort } from 'node:worker_threads';
import { CHUNKS_AHEAD, transferable } from './copy-thread.ts';
import { type PartCopySpec, partCopyText } from './part-copy.ts';

export interface ConvertRequest {
  id: number;
  key: string;
  bytes: Uint8Array;
  spec: PartCopySpec;
}

/**
 * Chunks this thread may send before the main thread has read them: the main thread says each time it has read one
 * (`{ read: 1 }`), so that a part converted faster than COPY takes it waits here, converted no further ahead.
 */
let credits = CHUNKS_AHEAD;
let wake: (() => void) | undefined;

async function send(port: NonNullable<typeof parentPort>, id: number, chunk: Buffer): Promise<void> {
  while (credits <= 0) await new Promise<void>((resolve) => (wake = resolve));
  credits -= 1;
  const [data, transfer] = transferable(chunk);
  port.postMessage({ id, chunk: data }, transfer);
}

async function convert(request: ConvertRequest, port: NonNullable<typeof parentPort>): Promise<void> {
  const { id, key, spec } = request;
  try {
    const bytes = Buffer.from(request.bytes.buffer, request.bytes.byteOffset, request.bytes.byteLength);
    const count = { nul: 0 };
    for await (const chunk of partCopyText(spec, key, bytes, count)) await send(port, id, chunk);
    port.postMessage({ id, done: true, nul: count.nul });
  } catch (error) {
    const e = error as { name?: string; message?: string; url?: string };
    port.postMessage({ id, error: { name: e.name ?? 'Error', message: e.message ?? String(error), url: e.url } });
  }
}

const port = parentPort;
if (port) {
  let queue = Promise.resolve();
  port.on('message', (message: ConvertRequest | { read: number }) => {
    if ('read' in message) {
      credits += message.read;
      wake?.();
      wake = undefined;
      return;
    }
    queue = queue.then(() => convert(message, port));
  });
}
