/**
 * `signal-kit sandbox [--port N] [--seed S] [--rate-limit N] [--credits N]`: runs the sandbox in the
 * foreground, prints its URL and the demo keys, and stops cleanly on SIGINT/SIGTERM.
 */
import { parseArgs } from 'node:util';
import { DEFAULT_ACCOUNT_ID, DEFAULT_KEYS, type SandboxOptions, startSandbox } from './index.ts';

const USAGE = `signal-kit sandbox [--port N] [--seed S] [--rate-limit N] [--credits N]

  --port N        port on 127.0.0.1 (default: a free port)
  --seed S        seed of all synthetic data and faults (default 1)
  --rate-limit N  requests per minute per account, shared by its keys (default 300; 0 = off)
  --credits N     starting balance of the demo account (default 1000000)`;

function integer(name: string, value: string | undefined, max = Number.MAX_SAFE_INTEGER): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) > max) {
    const err = new TypeError(`--${name} must be an integer from 0 to ${max} (got "${value}")`) as TypeError & {
      code: string;
    };
    err.code = 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE';
    throw err;
  }
  return Number(value);
}

/** Parses the flags into sandbox options; throws a parseArgs-style TypeError on bad usage. */
export function parseSandboxArgs(argv: string[]): SandboxOptions | 'help' {
  const { values } = parseArgs({
    args: argv,
    options: {
      port: { type: 'string' },
      seed: { type: 'string' },
      'rate-limit': { type: 'string' },
      credits: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
    allowPositionals: false,
  });
  if (values.help) return 'help';
  const options: SandboxOptions = {};
  const port = integer('port', values.port, 65535);
  if (port !== undefined) options.port = port;
  const seed = integer('seed', values.seed, 0xffffffff);
  if (seed !== undefined) options.seed = seed;
  const rate = integer('rate-limit', values['rate-limit']);
  if (rate !== undefined) options.rateLimitPerMinute = rate;
  const credits = integer('credits', values.credits);
  if (credits !== undefined) options.credits = credits;
  return options;
}

export interface CliIo {
  log: (line: string) => void;
  /** Resolves when the process should stop (default: SIGINT or SIGTERM). */
  stopSignal?: Promise<unknown>;
}

/** Runs the sandbox until SIGINT/SIGTERM (or `io.stopSignal`); resolves to the exit code. */
export async function runSandboxCli(argv: string[], io: CliIo = { log: (l) => console.log(l) }): Promise<number> {
  const parsed = parseSandboxArgs(argv);
  if (parsed === 'help') {
    io.log(USAGE);
    return 0;
  }
  const sandbox = await startSandbox(parsed);
  io.log(`Signal Data Service sandbox listening on ${sandbox.url}`);
  io.log(`  account ${DEFAULT_ACCOUNT_ID}: ${sandbox.ledger.balance(DEFAULT_ACCOUNT_ID)} credits`);
  io.log(`  API keys: ${DEFAULT_KEYS.join(', ')} (send as X-API-KEY or Authorization: Bearer)`);
  const rate = parsed.rateLimitPerMinute ?? 300;
  io.log(`  seed ${sandbox.seed}, rate limit ${rate === 0 ? 'off' : `${rate}/min per account`}; Ctrl-C to stop`);
  io.log(`  try: curl -s -H 'X-API-KEY: ${DEFAULT_KEYS[0]}' ${sandbox.url}/v1/stats`);
  let onSignal: (() => void) | undefined;
  const signalled = new Promise<void>((resolve) => {
    onSignal = resolve;
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await Promise.race([signalled, ...(io.stopSignal ? [io.stopSignal] : [])]);
  if (onSignal) {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
  io.log('sandbox: stopping');
  await sandbox.stop();
  return 0;
}
