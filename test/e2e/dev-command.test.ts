/**
 * `signal-kit dev` as a user starts it: the local stack comes up with Temporal's web UI, prints the UI's address,
 * the page at that address is the UI, nothing but warnings about real problems reaches the terminal, and Ctrl-C
 * stops everything with exit 0.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { afterAll, describe, expect, it } from 'vitest';
import { cliMain, repoRoot } from '../helpers/cli.ts';

let child: ChildProcess | undefined;

afterAll(async () => {
  // A failed assertion leaves dev running: Ctrl-C lets it stop its servers; a kill is the last resort.
  const running = child;
  if (!running || running.exitCode !== null) return;
  const exited = new Promise((resolve) => running.once('exit', resolve));
  running.kill('SIGINT');
  const timer = setTimeout(() => running.kill('SIGKILL'), 30_000);
  await exited;
  clearTimeout(timer);
}, 60_000);

describe('signal-kit dev', () => {
  it('serves the Temporal web UI and prints its address', async () => {
    const started = spawn(process.execPath, [cliMain, 'dev'], {
      cwd: repoRoot,
      env: { ...process.env, SIGNAL_KIT_LOG_FORMAT: 'json' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = started;
    let stderr = '';
    started.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const exited = new Promise<number | null>((resolve) => started.once('exit', (code) => resolve(code)));

    const stdout: string[] = [];
    const uiUrl = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no UI line within 120 s; stderr: ${stderr}`)), 120_000);
      createInterface({ input: started.stdout! }).on('line', (line) => {
        stdout.push(line);
        const match = /^# Temporal web UI .*: (http:\/\/127\.0\.0\.1:\d+)$/.exec(line);
        if (match) {
          clearTimeout(timer);
          resolve(match[1]!);
        }
      });
      started.once('exit', (code) => reject(new Error(`dev exited ${code} before printing the UI; stderr: ${stderr}`)));
    });
    expect(stdout.some((line) => line.startsWith('export TEMPORAL_ADDRESS='))).toBe(true);

    const page = await fetch(uiUrl, { signal: AbortSignal.timeout(30_000) });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    expect(await page.text()).toContain('<div id="svelte">');
    // The UI's own API, served behind the same address, sees this stack's Temporal and its namespace.
    const namespaces = await fetch(`${uiUrl}/api/v1/namespaces`, { signal: AbortSignal.timeout(30_000) });
    expect(namespaces.status).toBe(200);
    expect(JSON.stringify(await namespaces.json())).toContain('"default"');

    started.kill('SIGINT');
    expect(await exited).toBe(0);
    // The worker's setup says nothing at warning level: the API queue's worker has no workflows by design.
    const warnings = stderr.split('\n').filter((line) => /"level":"(warn|error)"/.test(line));
    expect(warnings).toEqual([]);
  }, 180_000);
});
