/**
 * The load's converter thread: turns the parts it is sent (bytes already checked against the manifest) into COPY
 * text (part-copy.ts) and sends the chunks back as they are made, handing their memory over rather than copying it.
 * Parts are converted one after the other, in the order they were sent.
 */
import { parentPort } from 'node:worker_threads';
import { transferable } from './copy-thread.ts';
import { type PartCopySpec, partCopyText } from './part-copy.ts';

export interface ConvertRequest {
  id: number;
  key: string;
  bytes: Uint8Array;
  spec: PartCopySpec;
}

async function convert(request: ConvertRequest, port: NonNullable<typeof parentPort>): Promise<void> {
  const { id, key, spec } = request;
  try {
    const bytes = Buffer.from(request.bytes.buffer, request.bytes.byteOffset, request.bytes.byteLength);
    for await (const chunk of partCopyText(spec, key, bytes)) {
      const [data, transfer] = transferable(chunk);
      port.postMessage({ id, chunk: data }, transfer);
    }
    port.postMessage({ id, done: true });
  } catch (error) {
    const e = error as { name?: string; message?: string; url?: string };
    port.postMessage({ id, error: { name: e.name ?? 'Error', message: e.message ?? String(error), url: e.url } });
  }
}

const port = parentPort;
if (port) {
  let queue = Promise.resolve();
  port.on('message', (request: ConvertRequest) => {
    queue = queue.then(() => convert(request, port));
  });
}
