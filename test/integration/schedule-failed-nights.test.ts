/**
 * A failed night says why (issue 36.1): an export that is missing, binary, undecodable or without a usable column
 * fails its night with the file, the row or byte, the column and the fix, in `schedule run --wait` and in
 * `schedule state`; `schedule create` refuses such an input (exit 2) unless `--allow-missing-input`.
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import ExcelJS from 'exceljs';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../cli/args.ts';
import { useScheduleEnv } from '../helpers/schedule-cli.ts';
import { writeExport } from '../promises/crm-sync-helpers.ts';

const records = Array.from({ length: 3 }, (_, i) => ({
  id: `0015g0000${String(i).padStart(4, '0')}`,
  website: `https://www.failed-night-co${i}.com`,
  industry: 'Software',
}));

describe('a failed night of a schedule says why', () => {
  const { ctx, cli, createNightly } = useScheduleEnv('schedule-failed-nights');

  const unreadable: { label: string; write: (path: string) => Promise<void>; says: RegExp[] }[] = [
    { label: 'missing', write: (path) => rm(path, { force: true }), says: [/accounts\.csv/, /does not exist/] },
    {
      // A workbook saved under the export's .csv name.
      label: 'binary',
      write: async (path) => {
        const workbook = new ExcelJS.Workbook();
        workbook.addWorksheet('Accounts').addRows([['Id', 'Website'], ...records.map((r) => [r.id, r.website])]);
        await writeFile(path, Buffer.from(await workbook.xlsx.writeBuffer()));
      },
      says: [/accounts\.csv/, /byte/i, /--encoding/],
    },
    {
      label: 'undecodable',
      write: (path) =>
        writeFile(
          path,
          Buffer.concat([
            Buffer.from('Id,Website\n001,https://www.caf\u00e9-one.com\n002,https://www.b'),
            Buffer.from([0xe9, 0x81, 0x0a]),
          ]),
        ),
      says: [/accounts\.csv/, /line 3/, /--encoding/],
    },
    {
      label: 'no usable column',
      write: (path) => writeFile(path, 'Id,Owner,Industry\n001,Ann,Retail\n'),
      says: [/accounts\.csv/, /Owner/, /--column/],
    },
  ];

  for (const [index, bad] of unreadable.entries()) {
    it(`a ${bad.label} export: run --wait exits 1 naming it, and state says the same`, async () => {
      const dir = join(ctx.dir, `night-${index}`);
      await mkdir(dir, { recursive: true });
      const input = await writeExport(dir, records);
      const output = pathToFileURL(join(dir, 'out')).href;
      const name = `failed-night-${index}`;
      const created = await createNightly(name, { input, output });
      expect(created.code).toBe(0);
      await bad.write(join(dir, 'accounts.csv'));
      const run = await cli<{ error: string }>('run', name, '--wait');
      expect(run.code).toBe(1);
      for (const words of bad.says) expect(run.out.error).toMatch(words);
      const state = await cli<{ lastFailure?: { error: string } }>('state', name);
      for (const words of bad.says) expect(state.out.lastFailure?.error).toMatch(words);
      const described = await cli<{ lastFailure?: { error: string } }>('describe', name);
      for (const words of bad.says) expect(described.out.lastFailure?.error).toMatch(words);
    });
  }

  it('create reads the export as a night would: a missing, unreadable or column-less one is refused (exit 2)', async () => {
    const dir = join(ctx.dir, 'create-checks');
    await mkdir(dir, { recursive: true });
    const output = pathToFileURL(join(dir, 'out')).href;
    const path = join(dir, 'accounts.csv');
    const input = pathToFileURL(path).href;
    const create = (...flags: string[]) => createNightly('checked', { input, output, flags });
    const refused = async (pattern: RegExp[]) => {
      const error = await create().then(
        () => undefined,
        (e: unknown) => e,
      );
      // A UsageError: the command exits 2 (cli/program.ts runCli).
      expect(error).toBeInstanceOf(UsageError);
      for (const words of pattern) expect((error as Error).message).toMatch(words);
    };
    await refused([/accounts\.csv does not exist/, /--allow-missing-input/]);
    await unreadable[2]!.write(path);
    await refused([/accounts\.csv/, /line 3/, /--encoding/]);
    await unreadable[3]!.write(path);
    await refused([/accounts\.csv/, /"Owner"/, /--column/]);
    expect(await cli<string[]>('list').then((r) => r.out)).not.toContainEqual(
      expect.objectContaining({ name: 'checked' }),
    );

    // An export that lands later: created, and its night fails saying so until it is there.
    await rm(path);
    expect((await create('--allow-missing-input')).code).toBe(0);
    const night = await cli<{ error: string }>('run', 'checked', '--wait');
    expect(night).toMatchObject({ code: 1, out: { error: expect.stringMatching(/accounts\.csv does not exist/) } });
    await writeExport(dir, records);
    expect((await cli('run', 'checked', '--wait')).code).toBe(0);
    expect((await cli<{ lastFailure: unknown }>('state', 'checked')).out.lastFailure).toBeNull();
  });
});
