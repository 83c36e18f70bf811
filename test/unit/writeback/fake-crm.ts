/**
 * An in-memory CRM behind the writer interface, for unit tests of the write-back: records by id, a field list, and
 * faults by record (deleted, validation rule, locked once) or by call (cut after the job was created, outage).
 */
import type {
  CrmConnectionCheck,
  CrmFieldInfo,
  CrmName,
  CrmObject,
  CrmWriteOutcome,
  CrmWriteRequest,
  CrmWriter,
} from '../../../connectors/crm/writer.ts';

export class FakeCrm implements CrmWriter {
  readonly records = new Map<string, Record<string, string | number | boolean | null>>();
  readonly deleted = new Set<string>();
  readonly invalid = new Set<string>();
  /** Locked for this many more writes. */
  readonly locked = new Map<string, number>();
  fields: CrmFieldInfo[];
  missingScopes: string[] = [];
  /** Ingest jobs created (a resumed write creates none). */
  jobs = 0;
  writeCalls = 0;
  /** Updates each record received. */
  readonly received = new Map<string, number>();
  /** The next write creates its job, saves the checkpoint, then dies (the worker killed mid-upload). */
  cutAfterCheckpoint = false;
  /** The next write fails before anything (an outage). */
  outage = false;
  private readonly jobUpdates = new Map<string, CrmWriteRequest['updates']>();

  readonly crm: CrmName;

  constructor(crm: CrmName, fields: CrmFieldInfo[]) {
    this.crm = crm;
    this.fields = fields;
  }

  async check(object: CrmObject): Promise<CrmConnectionCheck> {
    const missing = this.missingScopes.map((scope) => ({ what: `scope ${scope}`, fix: `grant ${scope} to the app` }));
    return { crm: this.crm, identity: `fake ${object}`, scopes: [], missing };
  }

  async describe(): Promise<CrmFieldInfo[]> {
    return this.fields;
  }

  async read(_object: CrmObject, ids: string[], fields: string[]) {
    const out = new Map<string, Record<string, string | null>>();
    for (const id of ids) {
      const record = this.records.get(id);
      if (!record) continue;
      out.set(id, Object.fromEntries(fields.map((f) => [f, record[f] == null ? null : String(record[f])])));
    }
    return out;
  }

  async write(request: CrmWriteRequest): Promise<CrmWriteOutcome[]> {
    this.writeCalls += 1;
    if (this.outage) {
      this.outage = false;
      throw new Error('503 service unavailable');
    }
    let jobId: string;
    const resumeId = request.resume && 'jobId' in request.resume ? request.resume.jobId : undefined;
    if (resumeId !== undefined && this.jobUpdates.has(resumeId)) jobId = resumeId;
    else {
      this.jobs += 1;
      jobId = `750${this.jobs}`;
      this.jobUpdates.set(jobId, request.updates);
      await request.onCheckpoint?.({ crm: 'salesforce', jobId });
    }
    if (this.cutAfterCheckpoint) {
      this.cutAfterCheckpoint = false;
      throw new Error('worker killed mid-upload');
    }
    return (this.jobUpdates.get(jobId) ?? []).map((update) => this.apply(update.id, update.values));
  }

  private apply(id: string, values: Record<string, string | number | boolean | null>): CrmWriteOutcome {
    if (this.deleted.has(id) || !this.records.has(id)) {
      return { id, outcome: 'rejected', code: 'ENTITY_IS_DELETED', message: 'entity is deleted', transient: false };
    }
    if (this.invalid.has(id)) {
      const message = 'Signal Count must be below 1000';
      return { id, outcome: 'rejected', code: 'FIELD_CUSTOM_VALIDATION_EXCEPTION', message, transient: false };
    }
    const locks = this.locked.get(id) ?? 0;
    if (locks > 0) {
      this.locked.set(id, locks - 1);
      return {
        id,
        outcome: 'rejected',
        code: 'UNABLE_TO_LOCK_ROW',
        message: 'unable to obtain exclusive access',
        transient: true,
      };
    }
    this.records.set(id, { ...this.records.get(id), ...values });
    this.received.set(id, (this.received.get(id) ?? 0) + 1);
    return { id, outcome: 'written' };
  }
}

export const FIELD = (name: string, type: CrmFieldInfo['type'], length?: number): CrmFieldInfo => ({
  name,
  label: name,
  type,
  crmType: type,
  ...(length ? { length } : {}),
  updateable: true,
});
