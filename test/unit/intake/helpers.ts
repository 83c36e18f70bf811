import net from 'node:net';

export interface RawAnswer {
  /** The status of the first response, or undefined when the server closed without answering. */
  status: number | undefined;
  text: string;
}

/**
 * Sends raw bytes on a fresh connection and reads until the server closes it (or `idleMs` passes with a complete
 * response head received, for servers that keep the connection open).
 */
export function sendRaw(port: number, bytes: Buffer | string, idleMs = 2_000): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    const chunks: Buffer[] = [];
    let settled = false;
    const finish = () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      const text = Buffer.concat(chunks).toString('latin1');
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(text);
      resolve({ status: m ? Number(m[1]) : undefined, text });
    };
    let timer = setTimeout(finish, 30_000);
    socket.on('data', (chunk) => {
      chunks.push(chunk);
      const received = Buffer.concat(chunks);
      const headEnd = received.indexOf('\r\n\r\n');
      if (headEnd === -1) return;
      // A complete answer on a connection the server keeps open: done once the announced body is in.
      const length = /\r\ncontent-length: *(\d+)/i.exec(received.subarray(0, headEnd).toString('latin1'));
      if (length && received.length >= headEnd + 4 + Number(length[1])) return finish();
      clearTimeout(timer);
      timer = setTimeout(finish, idleMs);
    });
    socket.on('close', finish);
    socket.on('error', (err: NodeJS.ErrnoException) => {
      // A reset after the answer is still an answer; a reset before any byte is a failure to report.
      if (chunks.length > 0 || err.code === 'ECONNRESET' || err.code === 'EPIPE') finish();
      else if (!settled) {
        settled = true;
        clearTimeout(timer);
        reject(err);
      }
    });
    socket.write(bytes);
  });
}
