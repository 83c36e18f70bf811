/**
 * An ingest job whose create call's answer never came back (a cut connection, a killed worker): Salesforce may have
 * created it without the kit learning its id. Before creating again, the kit lists the org's Bulk API 2.0 ingest jobs
 * (`GET /services/data/vXX.X/jobs/ingest?jobType=V2Ingest`, 1,000 a page, `nextRecordsUrl` to the next) and takes
 * the Open `update` jobs of the same object created by the same user since the create was sent (its checkpoint,
 * `creatingSince`): the oldest is carried on (no data can be in it: its id was never known), any other is aborted.
 * The integration user is assumed to be the kit's alone, as docs/crm-write-back.md asks.
 */
import type { CrmObject } from '../writer.ts';
import type { Pacer } from './pacing.ts';

interface ListedJob {
  id: string;
  object: string;
  operation: string;
  state: string;
  createdById: string;
  createdDate: string;
}

interface JobList {
  done: boolean;
  records: ListedJob[];
  nextRecordsUrl?: string | null;
}

/** How far the kit's clock may be ahead of Salesforce's when it stamps `creatingSince`. */
export const CLOCK_MARGIN_MS = 5 * 60_000;
/** Pages of 1,000 jobs read at most (an org keeps jobs for 7 days). */
const MAX_PAGES = 50;

export const creatingSince = (nowMs = Date.now()) => new Date(nowMs - CLOCK_MARGIN_MS).toISOString();

/** Salesforce ids compare on their case-sensitive 15 characters (the 18-character form adds a checksum). */
const sameId = (a: string, b: string) => a.slice(0, 15) === b.slice(0, 15);

async function openJobsSince(pacer: Pacer, object: CrmObject, since: string): Promise<ListedJob[]> {
  const { conn } = pacer;
  pacer.calls++;
  const user = (await conn.request('/services/oauth2/userinfo')) as { user_id?: string };
  const found: ListedJob[] = [];
  let url: string | null | undefined = `/services/data/v${conn.version}/jobs/ingest?jobType=V2Ingest`;
  for (let page = 0; url && page < MAX_PAGES; page++) {
    pacer.calls++;
    const list: JobList = await conn.request<JobList>(url);
    for (const job of list.records) {
      const mine = user.user_id === undefined || sameId(job.createdById, user.user_id);
      const recent = Date.parse(job.createdDate) >= Date.parse(since);
      if (mine && recent && job.object === object && job.operation === 'update' && job.state === 'Open') {
        found.push(job);
      }
    }
    url = list.done ? undefined : list.nextRecordsUrl;
  }
  return found.sort((a, b) => Date.parse(a.createdDate) - Date.parse(b.createdDate));
}

/** The id of the job a lost create made, if any (the others such creates made are aborted). */
export async function findLostJob(
  pacer: Pacer,
  object: CrmObject,
  since: string,
): Promise<{ id: string; state: string } | undefined> {
  const [kept, ...extra] = await openJobsSince(pacer, object, since);
  for (const job of extra) {
    pacer.calls++;
    await pacer.conn.bulk2.job('ingest', { id: job.id }).abort();
  }
  return kept ? { id: kept.id, state: kept.state } : undefined;
}
