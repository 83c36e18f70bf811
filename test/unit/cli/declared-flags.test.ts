/**
 * `sandbox` is also a program of its own (it imports nothing of the kit), so it reads its own argv after commander
 * has checked it. Every flag the command list declares for it must be one its parser takes, so that what `--help`
 * shows is what works.
 */
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../../cli/program.ts';
import { parseSandboxArgs } from '../../../sandbox/main.ts';

const sandbox = buildProgram('0.0.0', () => {}).commands.find((command) => command.name() === 'sandbox') as Command;

function refusal(parse: () => unknown): string | undefined {
  try {
    parse();
    return undefined;
  } catch (error) {
    return `${(error as { code?: string }).code ?? ''} ${(error as Error).message}`;
  }
}

describe('flags the command list declares for sandbox', () => {
  it('are each taken by the sandbox parser', () => {
    expect(sandbox.options.length).toBeGreaterThan(2);
    for (const option of sandbox.options) {
      const args = option.required ? [option.long!, '1'] : [option.long!];
      expect(
        refusal(() => parseSandboxArgs(args)),
        `sandbox ${args.join(' ')}`,
      ).toBeUndefined();
    }
  });

  it('the check is not vacuous: a flag the parser does not take is caught', () => {
    expect(refusal(() => parseSandboxArgs(['--colour', '1']))).toMatch(/ERR_PARSE_ARGS_UNKNOWN_OPTION/);
  });
});
