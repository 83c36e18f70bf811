import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/** One account of a CRM export as the nightly CRM sync's tests and benchmark write it. */
export interface ExportRecord {
  id: string;
  website: string;
  industry: string;
}

/** Writes a night's export (`Id,Website,Industry`) over the same file, as a CRM team's nightly job does. */
export async function writeExport(dir: string, records: readonly ExportRecord[]): Promise<string> {
  const path = join(dir, 'accounts.csv');
  const lines = ['Id,Website,Industry', ...records.map((r) => `${r.id},${r.website},${r.industry}`)];
  await writeFile(path, `${lines.join('\n')}\n`);
  return pathToFileURL(path).href;
}
