/**
 * The receiver's socket limits, below HTTP: a socket that never sends a byte is closed when the header timeout
 * passes, and a request Node's parser refuses (bad request line, target or header, oversized headers, timeouts) is
 * answered with a plain 4xx and closed, logged without the parser's stack since anyone can send one. A client that
 * goes away mid-body is logged as 499.
 */
import type { Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { parserErrorStatus, rawParserAnswer } from './answer.ts';
import type { ReceiverLogEntry } from './options.ts';

export interface SocketGuard {
  /** Call when a socket's request reached the handler: the socket no longer waits for its first byte. */
  requestArrived(socket: Socket): void;
  /** Whether the socket's request was refused by Node's parser after it reached the handler, and answered here. */
  answeredByParser(socket: Socket): boolean;
}

export function guardSockets(
  server: Server,
  headersTimeoutMs: number,
  log: ((entry: ReceiverLogEntry) => void) | undefined,
): SocketGuard {
  // Node's header timeout starts with the first byte: a socket that never sends one would stay open for good and
  // count against the connection cap.
  const awaitingFirstRequest = new WeakMap<Socket, NodeJS.Timeout>();
  server.on('connection', (socket: Socket) => {
    const timer = setTimeout(() => socket.destroy(), headersTimeoutMs);
    awaitingFirstRequest.set(socket, timer);
    socket.once('close', () => clearTimeout(timer));
  });
  const answeredByParserError = new WeakSet<Socket>();
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    const pending = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
    if (err.code === 'ECONNRESET' || err.code === 'HPE_INVALID_EOF_STATE') {
      // The client went away: nobody to answer. A request in progress is logged (499) by its handler.
      if (!pending) log?.({ method: '-', path: '-', status: 499, code: 'client_closed', durationMs: 0 });
      socket.destroy();
      return;
    }
    const status = parserErrorStatus(err.code);
    if (pending) answeredByParserError.add(socket);
    else log?.({ method: '-', path: '-', status, code: err.code ?? 'client_error', durationMs: 0 });
    // A body that breaks framing (bad chunk sizes) fails after the request reached the handler, whose answer was
    // not begun yet: the 400 goes out here all the same.
    if (socket.writable && !pending?.headersSent) socket.end(rawParserAnswer(status));
    socket.destroySoon();
  });
  return {
    requestArrived: (socket) => clearTimeout(awaitingFirstRequest.get(socket)),
    answeredByParser: (socket) => answeredByParserError.has(socket),
  };
}
