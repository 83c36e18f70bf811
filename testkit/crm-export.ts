import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/** One account of a CRM export as the nightly CRM sync's tests and benchmark write it. */
export interface ExportRecord {
  id: string;
  website: string;
  industry: string;
  /** The account's LinkedIn company page and name, for rows without a website. */
  linkedin?: string;
  name?: string;
}

/** Writes a night's export (`Id,Website,LinkedIn Company Page,Account Name,Industry`) over the same file, as a CRM team's nightly job does. */
export async function writeExport(dir: string, records: readonly ExportRecord[]): Promise<string> {
  const path = join(dir, 'accounts.csv');
  const cell = (value: string | undefined) => (value === undefined ? '' : `"${value.replaceAll('"', '""')}"`);
  const lines = [
    'Id,Website,LinkedIn Company Page,Account Name,Industry',
    ...records.map((r) => [r.id, r.website, cell(r.linkedin), cell(r.name), r.industry].join(',')),
  ];
  await writeFile(path, `${lines.join('\n')}\n`);
  return pathToFileURL(path).href;
}
