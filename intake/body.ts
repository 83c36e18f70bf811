/**
 * The request body: JSON only (no compression, UTF-8), at most `maxBodyBytes` (refused on Content-Length before
 * reading and counted while streaming), parsed strictly and no deeper than `maxJsonDepth`.
 */

import type { IncomingMessage } from 'node:http';
import { ClientGone, Rejection } from '../connectors/errors.ts';
import { exceedsJsonDepth } from '../connectors/json-depth.ts';

function isJsonContentType(value: string | undefined): boolean {
  if (!value) return false;
  const [mediaType, ...params] = value.split(';').map((s) => s.trim().toLowerCase());
  if (!mediaType) return false;
  const json = mediaType === 'application/json' || /^application\/[a-z0-9.+-]+\+json$/.test(mediaType);
  if (!json) return false;
  const charset = params.find((p) => p.startsWith('charset='));
  if (charset && !/^charset="?utf-8"?$/.test(charset)) return false;
  return true;
}

const tooLarge = (maxBodyBytes: number) =>
  new Rejection(413, 'payload_too_large', `body is larger than ${maxBodyBytes} bytes`);

/** Checks the headers that describe the body (415, 413) before a byte of it is read. */
export function checkBodyHeaders(req: IncomingMessage, maxBodyBytes: number): void {
  if (req.headers['content-encoding'] && req.headers['content-encoding'] !== 'identity') {
    throw new Rejection(415, 'unsupported_media_type', 'compressed bodies are not accepted');
  }
  if (!isJsonContentType(req.headers['content-type'])) {
    throw new Rejection(415, 'unsupported_media_type', 'Content-Type must be application/json (UTF-8)');
  }
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > maxBodyBytes) throw tooLarge(maxBodyBytes);
}

/**
 * Reads the body, counting bytes. Past the limit it stops reading (the socket is paused, to be closed after the
 * 413); a client that goes away mid-body is a `ClientGone`.
 */
export function readBody(req: IncomingMessage, maxBodyBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const onData = (chunk: Buffer) => {
      if (done) return;
      size += chunk.length;
      if (size > maxBodyBytes) {
        done = true;
        req.off('data', onData);
        req.pause();
        req.socket.pause();
        chunks.length = 0;
        reject(tooLarge(maxBodyBytes));
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.once('end', () => {
      if (done) return;
      done = true;
      resolve(Buffer.concat(chunks, size));
    });
    req.once('error', (err) => {
      if (done) return;
      done = true;
      reject(req.destroyed && !req.complete ? new ClientGone() : err);
    });
    req.once('close', () => {
      if (done) return;
      done = true;
      reject(new ClientGone());
    });
  });
}

/** Without `stream`, every decode() starts afresh, so one decoder serves every request. */
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** The body as JSON: strict UTF-8 (400), valid JSON (400), no deeper than `maxJsonDepth` (422). */
export function parseJsonBody(body: Buffer, maxJsonDepth: number): unknown {
  let text: string;
  try {
    text = strictUtf8.decode(body);
  } catch {
    throw new Rejection(400, 'invalid_json', 'body is not valid UTF-8');
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new Rejection(400, 'invalid_json', `body is not valid JSON: ${(err as Error).message}`);
  }
  if (exceedsJsonDepth(json, maxJsonDepth)) {
    throw new Rejection(
      422,
      'nesting_too_deep',
      `the event nests objects or arrays deeper than ${maxJsonDepth} levels; real events are shallow`,
    );
  }
  return json;
}
