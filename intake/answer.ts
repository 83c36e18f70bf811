/**
 * How the receiver answers: a JSON body, a refusal with its `error`, and the raw answer to a request Node's parser
 * refused. Refusals (nothing is enqueued) carry `{ "error": { "code", "message", "field"? } }`:
 *   401 missing/invalid signature or token, timestamp outside the tolerance
 *   400 a request line, target or header Node's parser or URL parsing cannot take (answered, the process stays up);
 *       408 headers or body not complete within the timeouts; 431 headers too large
 *   413 body over `maxBodyBytes` (checked on Content-Length before reading, and counted while streaming; the body
 *       is read no further and the connection is closed after the answer)
 *   415 not JSON (Content-Type other than application/json or application/*+json, or a Content-Encoding)
 *   400 malformed JSON or not UTF-8
 *   422 schema mismatch, `field` naming the first offending field; JSON nested deeper than `maxJsonDepth`
 *   404/405 unknown path or method; 503 enqueue failed or timed out (with `Retry-After`)
 */

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Rejection } from '../connectors/errors.ts';

export function send(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  body: unknown,
  extra: { headers?: Record<string, string>; close?: boolean } = {},
): void {
  const payload = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(Buffer.byteLength(payload)),
    'cache-control': 'no-store',
    ...(extra.close ? { connection: 'close' } : {}),
    ...extra.headers,
  });
  res.end(payload);
  if (extra.close) {
    // The body was not (fully) read: read no further; once the answer is handed to the OS, drop the connection
    // (otherwise Node would drain the rest of the body to keep the connection alive).
    const socket = req.socket;
    res.once('finish', () => socket.destroy());
  }
}

/** Answers a refusal; `bodyPending` when the body was not read, so the connection is closed after the answer. */
export function answerRejection(req: IncomingMessage, res: ServerResponse, r: Rejection, bodyPending: boolean): void {
  send(req, res, r.status, { error: r.error }, { headers: r.headers, close: bodyPending });
}

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  431: 'Request Header Fields Too Large',
};

/** The status for an error of Node's HTTP parser (a bad request line, oversized headers, a timeout). */
export function parserErrorStatus(code: string | undefined): 400 | 408 | 431 {
  return code === 'HPE_HEADER_OVERFLOW' ? 431 : code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
}

/** The whole answer, bytes on the socket, to a request Node's parser refused: no response object exists for it. */
export function rawParserAnswer(status: 400 | 408 | 431): string {
  const body = JSON.stringify({
    error: { code: status === 408 ? 'request_timeout' : 'bad_request', message: STATUS_TEXT[status] },
  });
  return `HTTP/1.1 ${status} ${STATUS_TEXT[status]}\r\nconnection: close\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}
