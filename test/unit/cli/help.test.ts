/**
 * Every command in the command list (cli/program.ts) answers `--help` with its own flags, and `--version` prints
 * the package's version. Both run the real entry in a child process, as a user would.
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../../cli/program.ts';

const run = promisify(execFile);
const main = fileURLToPath(new URL('../../../cli/main.ts', import.meta.url));

async function cli(args: string[]) {
  try {
    const { stdout, stderr } = await run(process.execPath, [main, ...args]);
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

/** Every runnable command, as the words a user types (`['schedule', 'create']`), with its declared flags. */
function commandsOf(command: Command, path: string[] = []): { path: string[]; flags: string[] }[] {
  return command.commands.flatMap((sub) => {
    if (sub.name() === 'help') return [];
    const here = [...path, sub.name()];
    const flags = sub.options.map((option) => option.long ?? option.flags);
    return sub.commands.length ? commandsOf(sub, here) : [{ path: here, flags }];
  });
}

/** The flags the docs and the scripts use: they must stay declared (and so in the help). */
const DOCUMENTED: Record<string, string[]> = {
  enrich: [
    '--input',
    '--output',
    '--column',
    '--signal-types',
    '--signal-subtypes',
    '--detected-after',
    '--limit',
  ].concat(['--max-credits', '--concurrency', '--job-id', '--wait', '--dry-run', '--compression']),
  'verify-emails': ['--input', '--output', '--column', '--max-credits', '--job-id', '--wait', '--dry-run'],
  'intent-export': ['--topics', '--output', '--email-validated', '--seniority', '--department', '--limit'].concat([
    '--job-id',
    '--resubmit',
    '--wait',
    '--dry-run',
  ]),
  'schedule create': ['--name', '--watchlist', '--output', '--every', '--signal-types', '--overlap', '--lookback'],
  'schedule run': ['--full-refresh', '--wait'],
  'schedule backfill': ['--from', '--to', '--wait'],
  'schedule state': ['--domain', '--domains', '--output'],
  'schedule reset': ['--domain', '--output'],
  'webhooks serve': ['--port', '--host', '--path', '--auth', '--allow-unauthenticated'],
  'webhooks subscribe': ['--url', '--types', '--description'],
  'webhooks update': ['--url', '--types', '--description', '--status'],
  sandbox: ['--port', '--seed', '--rate-limit', '--credits'],
  worker: ['--health-port', '--metrics-port', '--make-current'],
  'build-workflows': ['--output', '--workflows'],
  demo: ['--output'],
  dev: ['--no-worker'],
  load: ['--manifest', '--into', '--table-prefix'],
};

describe('signal-kit --help', () => {
  const commands = commandsOf(buildProgram('0.0.0', () => {}));

  it('lists every command, and documented flags are declared', () => {
    const names = commands.map((c) => c.path.join(' '));
    for (const name of [
      'enrich',
      'verify-emails',
      'intent-export',
      'status',
      'demo',
      'dev',
      'sandbox',
      'worker',
      'build-workflows',
      'load',
    ])
      expect(names).toContain(name);
    for (const sub of [
      'create',
      'list',
      'describe',
      'pause',
      'unpause',
      'trigger',
      'run',
      'backfill',
      'state',
      'reset',
    ])
      expect(names).toContain(`schedule ${sub}`);
    for (const sub of ['serve', 'subscribe', 'list', 'update', 'delete', 'test'])
      expect(names).toContain(`webhooks ${sub}`);
    for (const [name, flags] of Object.entries(DOCUMENTED)) {
      const command = commands.find((c) => c.path.join(' ') === name);
      expect(command?.flags, name).toEqual(expect.arrayContaining(flags));
    }
  });

  it('every command answers --help with exit 0 and its own flags', async () => {
    const top = await cli(['--help']);
    expect(top.code, top.stderr).toBe(0);
    for (const { path } of commands) expect(top.stdout).toContain(`\n  ${path[0]}`);
    const results = await Promise.all(commands.map(async (c) => ({ ...c, result: await cli([...c.path, '--help']) })));
    for (const { path, flags, result } of results) {
      expect(result.code, `${path.join(' ')}: ${result.stderr}`).toBe(0);
      expect(result.stdout).toContain(`Usage: signal-kit ${path.join(' ')}`);
      for (const flag of flags) expect(result.stdout, `${path.join(' ')} --help`).toContain(flag);
    }
  }, 120_000);

  it('signal-kit --version prints the package version', async () => {
    const { version } = JSON.parse(await readFile(new URL('../../../package.json', import.meta.url), 'utf8'));
    const result = await cli(['--version']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.trim()).toBe(version);
  });

  it.each([
    [['webhooks', 'subscribe', '--url', 'http://a.example/x', '--types', 'news', '--status', 'paused'], /--status/],
    [['webhooks', 'test', 'wh_1', '--url', 'http://a.example'], /unknown option '--url'/],
    [['webhooks', 'delete'], /missing required argument 'id'/],
    [['webhooks', 'delete', 'wh_1', 'wh_2'], /too many arguments/],
    [['webhooks', 'serve', '--port', '1', 'extra'], /too many arguments/],
    [['webhooks', 'rename'], /unknown command 'rename'/],
    [['status'], /missing required argument 'job-id'/],
  ])('bad usage %j exits 2 before anything starts', async (argv, message) => {
    const result = await cli(argv);
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toMatch(message);
  });

  it('a flag the command does not have exits 2 naming it', async () => {
    const result = await cli(['enrich', '--input', 'a.csv', '--output', 'out', '--colum', 'x']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/signal-kit enrich: unknown option '--colum'/);
    expect(result.stdout).toBe('');
  });

  it('schedule --help names every kind for what it is, not a push for all (issue 36.10)', () => {
    const schedule = buildProgram('0.0.0', () => {}).commands.find((c) => c.name() === 'schedule')!;
    const help = [schedule.helpInformation(), ...schedule.commands.map((c) => c.helpInformation())].join('\n');
    for (const kind of [/push/, /feed/, /nightly CRM sync/]) expect(schedule.helpInformation()).toMatch(kind);
    for (const wrong of [/scheduled pushes of new signals/, /every push schedule/, /the schedule's watermarks\b/])
      expect(help).not.toMatch(wrong);
  });
});
