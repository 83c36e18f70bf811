/**
 * `--dry-run`: prints what a job would read and could cost (library/dry-run.ts works it out), and the warnings a user
 * should see before spending.
 */
import type { UnusedColumn } from '../connectors/normalize/columns.ts';
import type { Store } from '../connectors/storage/store.ts';
import { dryRun } from '../library/dry-run.ts';
import type { JobStart } from '../library/jobs.ts';

export async function printDryRun(job: JobStart, openStore: (url: string) => Store): Promise<void> {
  const report = await dryRun(job, openStore);
  console.log(JSON.stringify(report, null, 2));
  for (const { key, reason } of report.skippedManifests) {
    console.error(`signal-kit: not learning from ${key}: ${reason}`);
  }
  const columns = 'columns' in report ? (report.columns as Record<string, unknown> | undefined) : undefined;
  const unused = (columns?.['unused'] ?? []) as UnusedColumn[];
  for (const { column, names } of unused) {
    console.error(
      `signal-kit: warning: column "${column}" names ${names} but is not used to identify a row; name it with --column if it should be`,
    );
  }
  if (columns && columns['record_id'] === undefined) {
    console.error(
      'signal-kit: warning: no id column found, so the output cannot be matched back to the CRM records; name it with --id-column',
    );
  }
}
