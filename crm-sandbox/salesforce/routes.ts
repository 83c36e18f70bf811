/** Which handler answers a call, by method and path. */
import type { Sessions } from './auth.ts';
import { BulkError, type IngestJobs, jobInfo, jobResults, type ResultKind } from './bulk.ts';
import { ApiFault, parseJson, type Reply, type Request } from './http.ts';
import type { RecordStore } from './records.ts';
import { describe, retrieveCollection, singleRecord, updateCollection } from './rest.ts';
import type { ApiUsage, Handler } from './server.ts';

const RESULT_KINDS = new Set(['successfulResults', 'failedResults', 'unprocessedrecords']);

function bulkFault(error: unknown): never {
  if (error instanceof BulkError) throw new ApiFault(error.status, error.errorCode, error.message);
  throw error;
}

/** Jobs a page of `GET /jobs/ingest` lists, as Salesforce answers it ("Get Information About All Ingest Jobs"). */
const JOBS_PAGE = 1000;

/**
 * Get All Jobs: every ingest job (all of them Bulk API 2.0 `V2Ingest` jobs here: a `jobType` of `Classic` or
 * `BigObjectIngest` lists none), 1,000 a page, `nextRecordsUrl` carrying the `queryLocator` of the next page.
 */
function listJobs(jobs: IngestJobs, req: Request): Record<string, unknown> {
  const type = req.query.get('jobType');
  const all = type === null || type === 'V2Ingest' ? jobs.all() : [];
  const from = Number(req.query.get('queryLocator') ?? '0') || 0;
  const page = all.slice(from, from + JOBS_PAGE);
  const done = from + JOBS_PAGE >= all.length;
  const next = new URLSearchParams({ ...(type ? { jobType: type } : {}), queryLocator: String(from + JOBS_PAGE) });
  return {
    done,
    records: page.map((j) => jobInfo(j, req.version)),
    nextRecordsUrl: done ? null : `/services/data/v${req.version}/jobs/ingest?${next}`,
  };
}

function ingestRoutes(jobs: IngestJobs, req: Request): Handler | undefined {
  const [, , id, sub] = req.segments;
  const m = req.method;
  const guarded =
    (fn: () => Reply): Handler =>
    () => {
      try {
        return fn();
      } catch (error) {
        return bulkFault(error);
      }
    };
  if (id === undefined) {
    if (m === 'POST')
      return guarded(() => ({
        status: 200,
        body: jobInfo(jobs.create(parseJson(req.body) as Record<string, unknown>, req.version), req.version),
      }));
    if (m === 'GET') return () => ({ status: 200, body: listJobs(jobs, req) });
    return undefined;
  }
  if (sub === undefined) {
    if (m === 'GET') return guarded(() => ({ status: 200, body: jobInfo(jobs.look(id), req.version) }));
    if (m === 'PATCH') {
      return guarded(() => {
        const state = (parseJson(req.body) as { state?: unknown }).state;
        return { status: 200, body: jobInfo(jobs.setState(id, state), req.version) };
      });
    }
    if (m === 'DELETE') {
      return guarded(() => {
        jobs.delete(id);
        return { status: 204 };
      });
    }
    return undefined;
  }
  if (sub === 'batches' && m === 'PUT') {
    return guarded(() => {
      jobs.upload(id, req.body);
      return { status: 201 };
    });
  }
  if (RESULT_KINDS.has(sub) && m === 'GET') {
    return guarded(() => ({ status: 200, text: jobResults(jobs.get(id), sub as ResultKind), contentType: 'text/csv' }));
  }
  return undefined;
}

export function apiRoutes(store: RecordStore, jobs: IngestJobs, usage: ApiUsage) {
  return (req: Request): Handler | undefined => {
    const [first, second, third, fourth] = req.segments;
    const m = req.method;
    if (first === 'limits' && m === 'GET') {
      const body = { DailyApiRequests: { Max: usage.max, Remaining: Math.max(0, usage.max - usage.used) } };
      return () => ({ status: 200, body });
    }
    if (first === 'sobjects' && fourth === undefined) {
      if (third === 'describe' && m === 'GET') return (r) => describe(store, r);
      if (third !== undefined && (m === 'GET' || m === 'PATCH')) return (r) => singleRecord(store, r);
    }
    if (first === 'composite' && second === 'sobjects') {
      if (third === undefined && m === 'PATCH') return (r) => updateCollection(store, r);
      if (third !== undefined && m === 'POST') return (r) => retrieveCollection(store, r);
    }
    if (first === 'jobs' && second === 'ingest') return ingestRoutes(jobs, req);
    return undefined;
  };
}

export interface Identity {
  orgId: string;
  userId: string;
  username: string;
  loginUrl: string;
}

export function otherRoutes(sessions: Sessions, who: Identity) {
  const identity = {
    id: `${who.loginUrl}/id/${who.orgId}/${who.userId}`,
    user_id: who.userId,
    organization_id: who.orgId,
    username: who.username,
    display_name: 'Integration User',
  };
  return (req: Request): { handler: Handler; auth: boolean } | undefined => {
    const path = `/${req.segments.join('/')}`;
    if (path === '/services/oauth2/token' && req.method === 'POST') {
      return {
        auth: false,
        handler: (r) => {
          const answer = sessions.grant(new URLSearchParams(r.body));
          return { status: answer.ok ? 200 : answer.status, body: answer.body };
        },
      };
    }
    if (path === '/services/oauth2/userinfo' && req.method === 'GET') {
      const body = {
        sub: identity.id,
        user_id: who.userId,
        organization_id: who.orgId,
        preferred_username: who.username,
      };
      return { auth: true, handler: () => ({ status: 200, body }) };
    }
    if (path === `/id/${who.orgId}/${who.userId}` && req.method === 'GET') {
      return { auth: true, handler: () => ({ status: 200, body: identity }) };
    }
    return undefined;
  };
}
