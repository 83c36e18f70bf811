/**
 * mTLS in front of a Temporal dev server. `temporal server start-dev` (CLI 1.5.1) has no TLS flags, so a
 * TLS-terminating proxy on 127.0.0.1 requires a client certificate signed by a test CA, speaks HTTP/2 over ALPN,
 * and passes the decrypted stream to the dev server's plain gRPC port.
 */
import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { createServer, type TLSSocket } from 'node:tls';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface TestCertificates {
  dir: string;
  caCert: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
  /** The DNS name in the server certificate (not 127.0.0.1: clients must set a server name). */
  serverName: string;
}

async function openssl(args: string[], cwd: string): Promise<void> {
  await run('openssl', args, { cwd });
}

/** A CA, a server certificate for `serverName` and a client certificate, all P-256, valid one day, in `dir`. */
export async function generateCertificates(dir: string, serverName = 'temporal.test'): Promise<TestCertificates> {
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  await openssl(
    ['req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '1', '-subj', '/CN=signal-kit test CA'],
    dir,
  );
  const leaf = async (name: string, subject: string, extensions: string) => {
    await writeFile(join(dir, `${name}.ext`), extensions);
    await openssl(['req', ...ec, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', subject], dir);
    await openssl(
      [
        'x509',
        '-req',
        '-in',
        `${name}.csr`,
        '-CA',
        'ca.pem',
        '-CAkey',
        'ca.key',
        '-CAcreateserial',
        '-days',
        '1',
      ].concat(['-out', `${name}.pem`, '-extfile', `${name}.ext`]),
      dir,
    );
  };
  await leaf(
    'server',
    `/CN=${serverName}`,
    `subjectAltName=DNS:${serverName}\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n`,
  );
  await leaf('client', '/CN=signal-kit-worker', 'extendedKeyUsage=clientAuth\nbasicConstraints=CA:FALSE\n');
  return {
    dir,
    caCert: join(dir, 'ca.pem'),
    serverCert: join(dir, 'server.pem'),
    serverKey: join(dir, 'server.key'),
    clientCert: join(dir, 'client.pem'),
    clientKey: join(dir, 'client.key'),
    serverName,
  };
}

export interface MtlsProxy {
  /** 127.0.0.1:port */
  address: string;
  /** Connections that presented a valid client certificate. */
  authorized(): number;
  /** Handshakes refused (no certificate, or one the CA did not sign). */
  refused(): number;
  close(): Promise<void>;
}

/** Terminates mTLS on a free 127.0.0.1 port and forwards each connection to `upstream` (host:port, plain h2c). */
export async function startMtlsProxy(certs: TestCertificates, upstream: string): Promise<MtlsProxy> {
  const [host, port] = [
    upstream.slice(0, upstream.lastIndexOf(':')),
    Number(upstream.slice(upstream.lastIndexOf(':') + 1)),
  ];
  let authorized = 0;
  let refused = 0;
  const sockets = new Set<Socket>();
  const server = createServer(
    {
      key: await readFile(certs.serverKey),
      cert: await readFile(certs.serverCert),
      ca: await readFile(certs.caCert),
      requestCert: true,
      rejectUnauthorized: true,
      ALPNProtocols: ['h2'],
    },
    (socket: TLSSocket) => {
      authorized++;
      const up = connect(port, host);
      for (const s of [socket, up]) {
        sockets.add(s);
        s.on('close', () => sockets.delete(s));
        s.on('error', () => {
          socket.destroy();
          up.destroy();
        });
      }
      socket.pipe(up).pipe(socket);
    },
  );
  server.on('tlsClientError', () => refused++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('proxy has no port');
  return {
    address: `127.0.0.1:${address.port}`,
    authorized: () => authorized,
    refused: () => refused,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
