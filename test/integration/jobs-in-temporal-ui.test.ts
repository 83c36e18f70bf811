/**
 * A job reads in Temporal's web UI without knowing the kit: the workflow's summary names the job and its input, its
 * details list what it was asked, each batch's activity says which batch of which job it is (not a bare
 * `enrichBatch`), and the workflow's current details hold its counts, equal to the `progress` query's.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { type JobHandle, startJob } from '../../library/jobs.ts';
import { progressQuery } from '../../workflows/job-progress.ts';
import { useJobEnv } from '../helpers/job-env.ts';

describe('jobs in the Temporal UI', () => {
  const job = useJobEnv('ui', { s3: false, gcs: false, sandbox: { seed: 3 } });

  it('an enrich job has a summary, details, one labelled activity per batch and its counts as current details', async () => {
    const { env, dir } = job;
    await env.startWorker();
    // 250 distinct domains: batches of 100, 100 and 50.
    const rows = ['domain', ...Array.from({ length: 250 }, (_, i) => `ui-company${i}.com`)];
    await writeFile(join(dir, 'crm.csv'), `${rows.join('\n')}\n`);
    const input = pathToFileURL(join(dir, 'crm.csv')).href;
    const output = pathToFileURL(join(dir, 'out')).href;
    const handle: JobHandle<'bulkEnrich'> = await startJob(env.client, env.config(), {
      workflow: 'bulkEnrich',
      input: { jobId: 'ui-enrich', input, output, options: { limit: 1 }, concurrency: 2 },
    });
    const result = await handle.result();
    expect(result.counts.distinct).toBe(250);

    const description = await handle.describe();
    expect(await description.staticSummary()).toBe('enrich crm.csv · job ui-enrich');
    const details = await description.staticDetails();
    expect(details).toContain(`- input: ${input}`);
    expect(details).toContain(`- output: ${output}/ui-enrich/`);
    expect(details).toContain('`progress` query');

    const summaries: string[] = [];
    for (const event of (await handle.fetchHistory()).events ?? []) {
      if (!event.activityTaskScheduledEventAttributes) continue;
      const type = event.activityTaskScheduledEventAttributes.activityType?.name;
      if (type !== 'enrichBatch') continue;
      const payload = event.userMetadata?.summary;
      summaries.push(payload?.data ? JSON.parse(Buffer.from(payload.data).toString('utf8')) : '');
    }
    // Batches started while the input is still being prepared cannot say how many there will be.
    expect(summaries.map((s) => s.replace(' of 3 ', ' ')).sort()).toEqual([
      'enrich batch 1 (items 1–100) · job ui-enrich',
      'enrich batch 2 (items 101–200) · job ui-enrich',
      'enrich batch 3 (items 201–250) · job ui-enrich',
    ]);
    expect(summaries).toContain('enrich batch 3 of 3 (items 201–250) · job ui-enrich');

    // What the UI reads for a workflow's current details: the built-in metadata query.
    const metadata = await handle.query<{ currentDetails?: string }>('__temporal_workflow_metadata');
    const progress = await handle.query(progressQuery);
    expect(progress).toMatchObject({ status: 'completed', batchesDone: 3, distinct: 250 });
    expect(metadata.currentDetails).toBe(
      `**completed** · batches 3 of 3 done · 250 rows, 250 distinct, 0 invalid · ok ${progress.ok}, ` +
        `not_found ${progress.not_found}, error 0 · ${progress.credits} credits`,
    );
  });
});
