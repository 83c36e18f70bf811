import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseSandboxArgs, runSandboxCli } from '../../../sandbox/main.ts';

describe('signal-kit sandbox', () => {
  it('parses its flags', () => {
    expect(parseSandboxArgs(['--port', '8080', '--seed', '9', '--rate-limit', '0', '--credits', '50'])).toEqual({
      port: 8080,
      seed: 9,
      rateLimitPerMinute: 0,
      credits: 50,
    });
    expect(parseSandboxArgs([])).toEqual({});
    expect(parseSandboxArgs(['--help'])).toBe('help');
    for (const bad of [['--port', 'abc'], ['--port', '70000'], ['--credits', '-1'], ['--colour', 'red'], ['extra']]) {
      expect(() => parseSandboxArgs(bad)).toThrow(
        expect.objectContaining({ code: expect.stringMatching(/^ERR_PARSE_ARGS/) }),
      );
    }
  });

  it('prints its URL and the demo keys, serves, and stops when told', async () => {
    const lines: string[] = [];
    let stop!: () => void;
    const stopSignal = new Promise<void>((resolve) => {
      stop = resolve;
    });
    const done = runSandboxCli(['--seed', '5', '--credits', '77'], { log: (l) => lines.push(l), stopSignal });
    while (!lines.some((l) => l.includes('http://127.0.0.1:'))) await new Promise((r) => setTimeout(r, 5));
    const url = /http:\/\/127\.0\.0\.1:\d+/.exec(lines.join('\n'))![0];
    expect(lines.join('\n')).toContain('sk_test_1');
    expect(lines.join('\n')).toContain('77 credits');
    const r = await fetch(`${url}/v1/stats`, { headers: { authorization: 'Bearer sk_test_2' } });
    expect(r.status).toBe(200);
    stop();
    expect(await done).toBe(0);
    await expect(fetch(`${url}/healthz`)).rejects.toThrow();
  });

  it('exits 0 on SIGTERM', async () => {
    const main = fileURLToPath(new URL('../../../sandbox/main.ts', import.meta.url));
    const child = spawn(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `process.exitCode = await (await import(${JSON.stringify(main)})).runSandboxCli([])`,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const until = Date.now() + 15_000;
    while (!/http:\/\/127\.0\.0\.1:\d+/.test(out) && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    const url = /http:\/\/127\.0\.0\.1:\d+/.exec(out)![0];
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(out).toContain('stopping');
  });
});
