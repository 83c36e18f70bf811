/**
 * `schedule` and `sandbox` still read their own argv after commander has checked it (the sandbox is also a program
 * of its own). Every flag the command list declares for them must be one their parsers take, so that what `--help`
 * shows is what works: a flag declared for a subcommand and refused by it would be a drift between the two.
 */
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { parseCreate, parseSubcommand } from '../../../cli/commands/schedule.ts';
import { buildProgram } from '../../../cli/program.ts';
import { parseSandboxArgs } from '../../../sandbox/main.ts';

const program = buildProgram('0.0.0', () => {});
const find = (...path: string[]): Command =>
  path.reduce((command, name) => command.commands.find((c) => c.name() === name)!, program);

/** The error a parser throws for `argv`, if any. */
function refusal(parse: () => unknown): string | undefined {
  try {
    parse();
    return undefined;
  } catch (error) {
    const code = (error as { code?: string }).code ?? '';
    return `${code} ${(error as Error).message}`;
  }
}

/** A value a declared option can take, good enough to get past the parser's knowledge of the flag. */
function argsFor(option: Command['options'][number]): string[] {
  const flag = option.long!;
  if (option.negate || (!option.required && !option.optional)) return [flag];
  return [flag, option.argChoices?.[0] ?? (flag === '--from' || flag === '--to' ? '2026-01-01T00:00:00Z' : '1')];
}

const isUnknownFlag = (message: string | undefined) =>
  message !== undefined && /ERR_PARSE_ARGS_UNKNOWN_OPTION|does not apply|Unknown option/.test(message);

describe('flags declared in the command list are taken by the command', () => {
  it('every schedule subcommand takes each flag its --help shows', () => {
    const schedule = find('schedule');
    expect(schedule.commands.length).toBeGreaterThan(5);
    for (const sub of schedule.commands) {
      if (sub.name() === 'help') continue;
      for (const option of sub.options) {
        const args = argsFor(option);
        const problem =
          sub.name() === 'create'
            ? refusal(() => parseCreate(args))
            : refusal(() =>
                parseSubcommand(sub.name(), [...(sub.registeredArguments.length ? ['nightly'] : []), ...args]),
              );
        expect(isUnknownFlag(problem), `schedule ${sub.name()} ${args.join(' ')}: ${problem}`).toBe(false);
      }
    }
  });

  it('sandbox takes each flag its --help shows', () => {
    for (const option of find('sandbox').options) {
      const problem = refusal(() => parseSandboxArgs(argsFor(option)));
      expect(problem, `sandbox ${option.long}`).toBeUndefined();
    }
  });

  it('the check is not vacuous: a flag a subcommand does not take is caught', () => {
    expect(isUnknownFlag(refusal(() => parseSubcommand('describe', ['nightly', '--wait'])))).toBe(true);
    expect(isUnknownFlag(refusal(() => parseCreate(['--colour', 'x'])))).toBe(true);
  });
});
