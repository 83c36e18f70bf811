/**
 * What the push stall drill (test/drills/run-kinds-drills.test.ts) judges by: the calls a worker had sent when it was
 * stopped (SIGSTOP). A request the worker wrote just before the stop may still be in the kernel, unread by the
 * recording proxy, whose process was busy: read right after the stop, the proxy's record misses it, and the drill took
 * it for a call asked after the fault (issue 36.11). `caughtUp()` waits until the proxy has read every byte.
 */
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { type ApiProxy, startApiProxy } from '../../testkit/api-proxy.ts';
import { clientOwner, receivedUnread } from '../../testkit/loopback-sockets.ts';

/** A client that sends one POST to the URL in argv once it is told to on stdin. */
const CLIENT = `
const url = process.argv[1];
process.stdin.once('data', () => {
  fetch(url + '/v1/companies/enrich/bulk', { method: 'POST', body: JSON.stringify({ domains: ['stopped.example'] }) })
    .then((answer) => answer.text())
    .then(() => process.exit(0));
});
console.log('ready');
`;

describe('a stopped client: what it sent before the stop', () => {
  const upstream = createServer((_req, res) => res.end('{}'));
  let proxy: ApiProxy | undefined;
  afterAll(async () => {
    await proxy?.stop();
    await new Promise((resolve) => upstream.close(resolve));
  });

  it('is recorded once the proxy has caught up, not necessarily at the moment of the stop', async () => {
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const target = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    let clientPid = 0;
    proxy = await startApiProxy(target, {
      senderOf: (clientPort, proxyPort) => (clientOwner(clientPort, proxyPort, [clientPid]) ? 'the client' : undefined),
    });
    const client = spawn(process.execPath, ['-e', CLIENT, proxy.url], { stdio: ['pipe', 'pipe', 'inherit'] });
    clientPid = client.pid!;
    try {
      await new Promise((resolve) => client.stdout.once('data', resolve));
      const port = Number(new URL(proxy.url).port);
      client.stdin.write('go\n');
      // This process (the proxy's) is busy, as on a loaded machine, until the kernel holds the client's request.
      const deadline = Date.now() + 60_000;
      while (receivedUnread(port) === 0) {
        if (Date.now() > deadline) throw new Error('the client sent nothing within 60 s');
      }
      process.kill(clientPid, 'SIGSTOP');
      // The old drill's reading: nothing sent before the stop.
      expect(proxy.calls).toHaveLength(0);
      await proxy.caughtUp();
      expect(proxy.calls).toEqual([
        expect.objectContaining({ domains: ['stopped.example'], sender: 'the client', seq: 1 }),
      ]);
    } finally {
      process.kill(clientPid, 'SIGCONT');
      client.kill('SIGKILL');
    }
  });
});
