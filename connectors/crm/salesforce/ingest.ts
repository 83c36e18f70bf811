/**
 * A large night: one Bulk API 2.0 ingest job (operation `update` by `Id`): create, save the checkpoint, upload the
 * CSV, close (`UploadComplete`), poll until the job ends, read its successful, failed and unprocessed results.
 *
 * Resumed from a checkpoint (a cut attempt saved the job's id right after creating it), the same job is carried on
 * from the state Salesforce reports: still Open → upload (an upload already received is answered "multiple contents",
 * which means it is there) and close; UploadComplete or InProgress → poll; ended → read the results. A second job is
 * never created for the same updates, unless the saved job no longer exists (deleted, or past Salesforce's 7 days).
 * A create whose answer was lost (the checkpoint says only when it was sent) is found among the org's open jobs
 * (`lost-jobs.ts`) before a new one is made.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { CrmRequestError, CrmUnavailableError } from '../../errors.ts';
import type { CrmObject, CrmRecordUpdate, CrmWriteCheckpoint, CrmWriteOutcome } from '../writer.ts';
import { callErrorCode } from './classify.ts';
import { creatingSince, findLostJob } from './lost-jobs.ts';
import { type IngestResults, ingestOutcomes } from './outcomes.ts';
import { type Pacer, paced } from './pacing.ts';

export interface IngestOptions {
  /** Between two looks at a closed job's state (default 2 s). */
  pollIntervalMs: number;
  /** How long a closed job may take before the write-back stops (retryable; the checkpoint resumes it). */
  pollTimeoutMs: number;
}

export const DEFAULT_INGEST: IngestOptions = { pollIntervalMs: 2000, pollTimeoutMs: 30 * 60_000 };

interface JobInfo {
  id: string;
  state: string;
  errorMessage?: string;
}

type JobHandle = ReturnType<Pacer['conn']['bulk2']['job']>;

const ENDED = new Set(['JobComplete', 'Failed', 'Aborted']);

/** Every record carries every column: an empty cell leaves a field as it is, `null` (`#N/A`) empties it. */
function csvRecords(updates: CrmRecordUpdate[]): Record<string, string | number | boolean | null>[] {
  const columns = [...new Set(updates.flatMap((u) => Object.keys(u.values)))];
  return updates.map((u) => {
    const row: Record<string, string | number | boolean | null> = { Id: u.id };
    for (const column of columns) row[column] = column in u.values ? (u.values[column] ?? null) : '';
    return row;
  });
}

async function lookUp(pacer: Pacer, jobId: string): Promise<{ handle: JobHandle; info: JobInfo } | undefined> {
  const handle = pacer.conn.bulk2.job('ingest', { id: jobId });
  try {
    const info = (await paced(pacer, `ingest job ${jobId} info`, () => handle.check())) as JobInfo;
    return { handle, info };
  } catch (error) {
    if (error instanceof CrmRequestError && error.code === 'NOT_FOUND') return undefined;
    throw error;
  }
}

/**
 * A new job. Its create call is not safe to repeat (a lost answer would leave a second job): the checkpoint first says
 * a create was sent and when, and an attempt after a failed one first looks for the job the lost answer created.
 */
async function create(
  pacer: Pacer,
  object: CrmObject,
  request: Checkpointing,
): Promise<{ handle: JobHandle; info: JobInfo }> {
  const since = creatingSince();
  await request.onCheckpoint?.({ crm: 'salesforce', creatingSince: since });
  let attempt = 0;
  const opened = await paced(pacer, `ingest job for ${object}`, async () => {
    if (attempt++ > 0) {
      const lost = await findLostJob(pacer, object, since);
      if (lost) return await adopt(pacer, lost.id);
    }
    const handle = pacer.conn.bulk2.createJob({ object, operation: 'update', contentType: 'CSV', lineEnding: 'LF' });
    return { handle, info: (await handle.open()) as JobInfo };
  });
  await request.onCheckpoint?.({ crm: 'salesforce', jobId: opened.info.id });
  return opened;
}

/** A resumed write: the job its checkpoint names, or the one a create cut before its answer made (if any). */
async function resumed(
  pacer: Pacer,
  object: CrmObject,
  request: Checkpointing,
): Promise<{ handle: JobHandle; info: JobInfo } | undefined> {
  const resume = request.resume;
  if (resume?.crm !== 'salesforce') return undefined;
  if ('jobId' in resume) return lookUp(pacer, resume.jobId);
  const since = resume.creatingSince;
  const lost = await paced(pacer, `open ingest jobs for ${object}`, () => findLostJob(pacer, object, since));
  if (lost === undefined) return undefined;
  await request.onCheckpoint?.({ crm: 'salesforce', jobId: lost.id });
  return await paced(pacer, `ingest job ${lost.id} info`, () => adopt(pacer, lost.id));
}

/** A handle on a job known by its id alone (jsforce needs the job's info before an upload). */
async function adopt(pacer: Pacer, jobId: string): Promise<{ handle: JobHandle; info: JobInfo }> {
  const handle = pacer.conn.bulk2.job('ingest', { id: jobId });
  pacer.calls++;
  return { handle, info: (await handle.check()) as JobInfo };
}

async function upload(pacer: Pacer, handle: JobHandle, jobId: string, updates: CrmRecordUpdate[]): Promise<void> {
  const records = csvRecords(updates);
  let attempt = 0;
  await paced(pacer, `ingest job ${jobId} upload`, async () => {
    // A job handle takes one upload: a fresh one (and a look at the job) for each attempt after the first.
    let current = handle;
    if (attempt++ > 0) {
      current = pacer.conn.bulk2.job('ingest', { id: jobId });
      await current.check();
    }
    try {
      await current.uploadData(records);
    } catch (error) {
      if (callErrorCode(error) === 'BULK_API_ERROR' && /multiple contents/i.test((error as Error).message)) return;
      throw error;
    }
  });
}

async function close(pacer: Pacer, handle: JobHandle, jobId: string): Promise<void> {
  await paced(pacer, `ingest job ${jobId} close`, async () => {
    try {
      await handle.close();
    } catch (error) {
      // Closed already (the answer to an earlier close was lost): carry on from the state it is in.
      if (callErrorCode(error) !== 'INVALIDJOBSTATE') throw error;
    }
  });
}

async function waitForEnd(pacer: Pacer, handle: JobHandle, jobId: string, options: IngestOptions): Promise<JobInfo> {
  const until = Date.now() + options.pollTimeoutMs;
  for (;;) {
    const info = (await paced(pacer, `ingest job ${jobId} info`, () => handle.check())) as JobInfo;
    if (ENDED.has(info.state)) return info;
    if (info.state === 'Open')
      throw new CrmRequestError('salesforce', 'INVALIDJOBSTATE', `ingest job ${jobId} is still Open after its close`);
    if (Date.now() >= until) {
      throw new CrmUnavailableError(
        'salesforce',
        'POLL_TIMEOUT',
        `ingest job ${jobId} still ${info.state} after ${options.pollTimeoutMs} ms (resumed from its checkpoint next time)`,
      );
    }
    await sleep(options.pollIntervalMs);
  }
}

async function results(pacer: Pacer, handle: JobHandle, jobId: string): Promise<IngestResults> {
  const read = <T>(name: string, fn: () => Promise<T>) => paced(pacer, `ingest job ${jobId} ${name}`, fn);
  return {
    successfulResults: (await read('successfulResults', () => handle.getSuccessfulResults())) as unknown as Record<
      string,
      string
    >[],
    failedResults: (await read('failedResults', () => handle.getFailedResults())) as unknown as Record<
      string,
      string
    >[],
    unprocessedRecords: (await read('unprocessedrecords', () => handle.getUnprocessedRecords())) as unknown as Record<
      string,
      string
    >[],
  };
}

interface Checkpointing {
  resume?: CrmWriteCheckpoint;
  onCheckpoint?: (checkpoint: CrmWriteCheckpoint) => Promise<void>;
}

export async function writeByIngestJob(
  pacer: Pacer,
  object: CrmObject,
  updates: CrmRecordUpdate[],
  request: Checkpointing,
  options: IngestOptions,
): Promise<CrmWriteOutcome[]> {
  const { handle, info } = (await resumed(pacer, object, request)) ?? (await create(pacer, object, request));
  if (info.state === 'Open') {
    await upload(pacer, handle, info.id, updates);
    await close(pacer, handle, info.id);
  }
  const ended = await waitForEnd(pacer, handle, info.id, options);
  const why =
    ended.state === 'JobComplete'
      ? 'no result from Salesforce for this record'
      : `ingest job ${info.id} ${ended.state}${ended.errorMessage ? `: ${ended.errorMessage}` : ''}`;
  return ingestOutcomes(updates, await results(pacer, handle, info.id), why);
}
