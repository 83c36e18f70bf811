/**
 * Bulk API 2.0 ingest jobs (`/services/data/vXX.X/jobs/ingest`): create (`operation`, `object`, `contentType: CSV`),
 * one CSV upload (`PUT …/{jobId}/batches`, 201), close (`PATCH {state: UploadComplete}`) or abort, job info through
 * Open → UploadComplete → InProgress → JobComplete (or Failed / Aborted), and the three result files:
 * `successfulResults` (`sf__Id,sf__Created,…`), `failedResults` (`sf__Id,sf__Error,…`, the error as
 * `CODE:message:fields`), `unprocessedrecords` (the rows as uploaded). The stand-in takes `update` jobs only: the kit
 * never creates or deletes a record. An empty cell leaves the field as it is and `#N/A` empties it, as Bulk API 2.0
 * reads them.
 */
import { formatCsv, parseCsv } from './csv.ts';
import { OBJECTS, type ObjectName } from './fields.ts';
import { IdSequence } from './ids.ts';
import type { RecordStore } from './records.ts';
import { salesforceDateTime } from './values.ts';

export type JobState = 'Open' | 'UploadComplete' | 'InProgress' | 'JobComplete' | 'Failed' | 'Aborted';

export interface IngestJob {
  id: string;
  operation: string;
  object: ObjectName;
  state: JobState;
  createdDate: string;
  systemModstamp: string;
  apiVersion: number;
  errorMessage?: string;
  header: string[];
  rows: string[][] | undefined;
  successful: string[][];
  failed: string[][];
  unprocessed: string[][];
}

export class BulkError extends Error {
  readonly status: number;
  readonly errorCode: string;
  constructor(status: number, errorCode: string, message: string) {
    super(message);
    this.status = status;
    this.errorCode = errorCode;
  }
}

export interface JobTiming {
  /** How long a closed job waits before it is processed (default 0: on the next turn of the event loop). */
  processingMs: number;
}

export class IngestJobs {
  private readonly jobs = new Map<string, IngestJob>();
  private readonly ids = new IdSequence('750');
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly store: RecordStore;
  private readonly now: () => number;
  readonly timing: JobTiming;
  /** Jobs created since start (`POST /jobs/ingest` accepted). */
  created = 0;
  /** Looks at a job's state answered while the org was still processing it (closed, not yet complete). */
  checksWhileProcessing = 0;

  constructor(store: RecordStore, now: () => number, timing: JobTiming) {
    this.store = store;
    this.now = now;
    this.timing = timing;
  }

  all(): IngestJob[] {
    return [...this.jobs.values()];
  }

  get(id: string): IngestJob {
    const job = this.jobs.get(id);
    if (!job) throw new BulkError(404, 'NOT_FOUND', `Job with id ${id} not found`);
    return job;
  }

  create(body: Record<string, unknown>, version: string): IngestJob {
    const object = body['object'];
    if (typeof object !== 'string' || !(OBJECTS as readonly string[]).includes(object)) {
      throw new BulkError(400, 'INVALIDENTITY', `Entity '${String(object)}' is not supported by the Bulk API.`);
    }
    if (body['operation'] !== 'update') {
      throw new BulkError(400, 'FEATURE_NOT_ENABLED', `operation '${String(body['operation'])}' is not supported here`);
    }
    if (body['contentType'] !== undefined && body['contentType'] !== 'CSV') {
      throw new BulkError(400, 'INVALIDJOB', 'contentType must be CSV');
    }
    const stamp = salesforceDateTime(this.now());
    const job: IngestJob = {
      id: this.ids.take(),
      operation: 'update',
      object: object as ObjectName,
      state: 'Open',
      createdDate: stamp,
      systemModstamp: stamp,
      apiVersion: Number(version),
      header: [],
      rows: undefined,
      successful: [],
      failed: [],
      unprocessed: [],
    };
    this.jobs.set(job.id, job);
    this.created++;
    return job;
  }

  upload(id: string, csv: string): void {
    const job = this.get(id);
    if (job.state !== 'Open') throw new BulkError(409, 'INVALIDJOBSTATE', `Job ${id} is not in the Open state`);
    if (job.rows !== undefined) {
      throw new BulkError(
        400,
        'BULK_API_ERROR',
        `Found multiple contents for job: <${id}>, please 'Close' / 'Abort' / 'Delete' the current Job then create a new Job and make sure the content is only uploaded once`,
      );
    }
    const [header = [], ...rows] = parseCsv(csv);
    job.header = header;
    job.rows = rows.filter((row) => !(row.length === 1 && row[0] === ''));
  }

  /** A job as `GET …/jobs/ingest/{id}` shows it, counting a look that finds it still being processed. */
  look(id: string): IngestJob {
    const job = this.get(id);
    if (job.state === 'UploadComplete' || job.state === 'InProgress') this.checksWhileProcessing++;
    return job;
  }

  setState(id: string, state: unknown): IngestJob {
    const job = this.get(id);
    if (state === 'Aborted' && ['Open', 'UploadComplete', 'InProgress'].includes(job.state)) {
      job.unprocessed = job.rows ?? [];
      return this.move(job, 'Aborted');
    }
    if (state !== 'UploadComplete')
      throw new BulkError(400, 'INVALIDJOBSTATE', `Cannot change state to ${String(state)}`);
    if (job.state !== 'Open') throw new BulkError(409, 'INVALIDJOBSTATE', `Job ${id} is not in the Open state`);
    this.move(job, 'UploadComplete');
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.process(job);
    }, this.timing.processingMs);
    this.timers.add(timer);
    return job;
  }

  delete(id: string): void {
    const job = this.get(id);
    if (!['JobComplete', 'Failed', 'Aborted'].includes(job.state)) {
      throw new BulkError(400, 'INVALIDJOBSTATE', `Job ${id} must be complete, failed or aborted to be deleted`);
    }
    this.jobs.delete(id);
  }

  close(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }

  private move(job: IngestJob, state: JobState): IngestJob {
    job.state = state;
    job.systemModstamp = salesforceDateTime(this.now());
    return job;
  }

  private process(job: IngestJob): void {
    if (job.state !== 'UploadComplete') return;
    this.move(job, 'InProgress');
    const rows = job.rows ?? [];
    const unknown = this.store.unknownFields(job.object, job.header);
    const idColumn = job.header.findIndex((h) => h.toLowerCase() === 'id');
    const refusal =
      rows.length === 0
        ? 'InvalidBatch : No data was uploaded'
        : unknown.length > 0
          ? `InvalidBatch : Field name not found : ${unknown[0]}`
          : idColumn < 0
            ? 'InvalidBatch : Field name not found : Id'
            : undefined;
    if (refusal !== undefined) {
      this.fail(job, refusal);
      return;
    }
    for (const row of rows) this.processRow(job, row, idColumn);
    this.move(job, 'JobComplete');
  }

  private processRow(job: IngestJob, row: string[], idColumn: number): void {
    const values: Record<string, unknown> = {};
    job.header.forEach((name, i) => {
      const cell = row[i] ?? '';
      if (i === idColumn || cell === '') return;
      values[name] = cell === '#N/A' ? null : cell;
    });
    const id = row[idColumn] ?? '';
    const result = this.store.update(job.object, id, values);
    if (result.ok) job.successful.push([result.id, 'false', ...row]);
    else {
      const { statusCode, message, fields } = result.error;
      job.failed.push([id, `${statusCode}:${message}:${fields.length > 0 ? fields.join(',') : '--'}`, ...row]);
    }
  }

  private fail(job: IngestJob, message: string): void {
    job.errorMessage = message;
    job.unprocessed = job.rows ?? [];
    this.move(job, 'Failed');
  }
}

/** The job info resource, as create, close and `GET …/jobs/ingest/{id}` answer it. */
export function jobInfo(job: IngestJob, version: string): Record<string, unknown> {
  const processed = job.successful.length + job.failed.length;
  return {
    id: job.id,
    operation: job.operation,
    object: job.object,
    createdById: '005Dn0000000001AAA',
    createdDate: job.createdDate,
    systemModstamp: job.systemModstamp,
    state: job.state,
    concurrencyMode: 'Parallel',
    contentType: 'CSV',
    apiVersion: job.apiVersion,
    jobType: 'V2Ingest',
    contentUrl: `services/data/v${version}/jobs/ingest/${job.id}/batches`,
    lineEnding: 'LF',
    columnDelimiter: 'COMMA',
    numberRecordsProcessed: processed,
    numberRecordsFailed: job.failed.length,
    retries: 0,
    totalProcessingTime: 0,
    apiActiveProcessingTime: 0,
    apexProcessingTime: 0,
    ...(job.errorMessage !== undefined ? { errorMessage: job.errorMessage } : {}),
  };
}

export type ResultKind = 'successfulResults' | 'failedResults' | 'unprocessedrecords';

export function jobResults(job: IngestJob, kind: ResultKind): string {
  if (kind === 'successfulResults') return formatCsv(['sf__Id', 'sf__Created', ...job.header], job.successful);
  if (kind === 'failedResults') return formatCsv(['sf__Id', 'sf__Error', ...job.header], job.failed);
  return formatCsv(job.header, job.unprocessed);
}
