import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { seeded } from './random.ts';

export interface DrillInput {
  /** The file's URL (file://). */
  url: string;
  rows: number;
  /** The normalized domain of every distinct valid row: exactly one output line each. */
  distinct: Set<string>;
  /** 1-based data rows that hold no domain: exactly one `invalid` line each. */
  invalidRows: number[];
  /** With `names`: the rows whose website is junk and which the kit enriches by their company name instead. */
  byName: { row: number; name: string }[];
}

/**
 * A CRM-like CSV of `distinct` companies: each once as a bare domain, some again in other spellings (duplicates
 * after normalization), and some junk rows, shuffled by `seed`.
 */
export async function writeDomainsCsv(
  dir: string,
  name: string,
  options: { distinct: number; seed: number; duplicates?: number; junk?: number; prefix?: string; names?: boolean },
): Promise<DrillInput> {
  const random = seeded(options.seed);
  const prefix = options.prefix ?? `drill${options.seed}`;
  const domains = Array.from({ length: options.distinct }, (_, i) => `${prefix}-co${i}.com`);
  const cells: { value: string; valid: boolean }[] = domains.map((d) => ({ value: d, valid: true }));
  const spellings = [(d: string) => `https://www.${d}/about`, (d: string) => d.toUpperCase(), (d: string) => `${d}.`];
  for (let i = 0; i < (options.duplicates ?? Math.floor(options.distinct / 10)); i++) {
    const domain = domains[Math.floor(random() * domains.length)]!;
    cells.push({ value: spellings[i % spellings.length]!(domain), valid: true });
  }
  const junk = ['', 'n/a', 'not a website', 'http://', '???', '10.0.0.1', 'foo@'];
  for (let i = 0; i < (options.junk ?? 5); i++) cells.push({ value: junk[i % junk.length]!, valid: false });
  for (let i = cells.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [cells[i], cells[j]] = [cells[j]!, cells[i]!];
  }
  // A note, not a company name, unless `names`: a row whose website is junk stays invalid instead of being enriched
  // by its name.
  const lines = [options.names ? 'id,name,website' : 'id,note,website'];
  const invalidRows: number[] = [];
  const byName: { row: number; name: string }[] = [];
  cells.forEach((cell, i) => {
    const label = options.names ? `Company ${i}` : `Note ${i}`;
    lines.push(`${i},${label},"${cell.value}"`);
    if (cell.valid) return;
    if (options.names) byName.push({ row: i + 1, name: label });
    else invalidRows.push(i + 1);
  });
  const path = join(dir, name);
  await writeFile(path, `${lines.join('\n')}\n`);
  return { url: pathToFileURL(path).href, rows: cells.length, distinct: new Set(domains), invalidRows, byName };
}

const tempDirs: string[] = [];

/** A fresh temporary directory, removed by removeTempDirs(). */
export async function tempDir(label: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), `signal-kit-drill-${label}-`));
  tempDirs.push(dir);
  return dir;
}

export async function removeTempDirs(): Promise<void> {
  await Promise.all(tempDirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
}
