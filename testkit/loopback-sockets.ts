/**
 * What the kernel knows of TCP connections on 127.0.0.1 (Linux's /proc): the bytes a proxy has not read yet, and which
 * process holds the client end of a connection. For drills that stop a process (SIGSTOP) and must know what it had
 * sent before it stopped, and who sent a call.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

interface TcpSocket {
  localPort: number;
  remotePort: number;
  state: number;
  /** Bytes written and not yet acknowledged by the other end (for a listening socket: 0). */
  txQueue: number;
  /** Bytes received and not yet read by the process (for a listening socket: connections not yet accepted). */
  rxQueue: number;
  inode: string;
}

const LISTEN = 0x0a;

function tcpSockets(): TcpSocket[] {
  let text: string;
  try {
    text = readFileSync('/proc/net/tcp', 'utf8');
  } catch (error) {
    throw new Error(`loopback-sockets needs Linux's /proc/net/tcp: ${(error as Error).message}`);
  }
  return text
    .split('\n')
    .slice(1)
    .filter((line) => line.trim())
    .map((line) => {
      const f = line.trim().split(/\s+/);
      const [tx, rx] = f[4]!.split(':');
      return {
        localPort: Number.parseInt(f[1]!.split(':')[1]!, 16),
        remotePort: Number.parseInt(f[2]!.split(':')[1]!, 16),
        state: Number.parseInt(f[3]!, 16),
        txQueue: Number.parseInt(tx!, 16),
        rxQueue: Number.parseInt(rx!, 16),
        inode: f[9]!,
      };
    });
}

/**
 * Bytes on their way to the server listening on `port` that it has not read yet: unread at its end, unacknowledged at
 * the clients' end, and connections it has not accepted yet. 0 means the server's process has read every byte its
 * clients wrote until now.
 */
export function unreadBy(port: number): number {
  let unread = 0;
  for (const s of tcpSockets()) {
    if (s.localPort === port) unread += s.rxQueue;
    else if (s.remotePort === port && s.state !== LISTEN) unread += s.txQueue;
  }
  return unread;
}

/** Bytes the server listening on `port` has received on its connections (accepted or not) and not read yet. */
export function receivedUnread(port: number): number {
  let unread = 0;
  for (const s of tcpSockets()) if (s.localPort === port && s.state !== LISTEN) unread += s.rxQueue;
  return unread;
}

/** Which of `pids` holds the client end (port `clientPort`) of a connection to `serverPort`, if any. */
export function clientOwner(clientPort: number, serverPort: number, pids: readonly number[]): number | undefined {
  const socket = tcpSockets().find((s) => s.localPort === clientPort && s.remotePort === serverPort);
  if (!socket) return undefined;
  const link = `socket:[${socket.inode}]`;
  for (const pid of pids) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue; // gone
    }
    for (const fd of fds) {
      try {
        if (readlinkSync(`/proc/${pid}/fd/${fd}`) === link) return pid;
      } catch {}
    }
  }
  return undefined;
}
