/**
 * A server started on ports picked a moment earlier can lose them to another process. The Temporal dev server then
 * dies with "bind: address already in use" followed by a stack trace of hundreds of lines; the clash must still be
 * recognized (the start tried again on new ports), not hidden past the kept output (seen failing a fresh-clone suite:
 * "temporal: exited (code 2) before describeNamespace(default) succeeded", with only the trace's last lines).
 */
import { describe, expect, it } from 'vitest';
import { readyOrStopped, retryOnPortClash, startProcess } from '../../../devstack/process.ts';

const dies = [
  "console.log('Unable to start server. Error: listen tcp 127.0.0.1:7233: bind: address already in use');",
  "for (let i = 0; i < 500; i++) console.log('go.uber.org/dig.paramList.BuildList frame ' + i);",
  'process.exit(2);',
].join('\n');

describe('retryOnPortClash', () => {
  it('starts again when the server died of a port clash, however long the trace after the reason', async () => {
    let attempts = 0;
    const server = await retryOnPortClash(async () => {
      attempts += 1;
      const first = attempts === 1;
      const proc = startProcess({
        name: 'fake',
        command: process.execPath,
        args: ['-e', first ? dies : 'setInterval(() => {}, 1000);'],
      });
      // The first never answers (it dies); the second is ready at once.
      const ready = async () => {
        if (first) throw new Error('not answering');
      };
      return readyOrStopped(proc, ready, { timeoutMs: 10_000, what: 'ready' }).catch(async (error) => {
        await proc.stop();
        throw error;
      });
    });
    try {
      expect(attempts).toBe(2);
      expect(server.hasExited()).toBe(false);
    } finally {
      await server.stop();
    }
  });
});
