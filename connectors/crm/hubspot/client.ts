/**
 * HubSpot's official client (`@hubspot/api-client`) as the writer uses it, and what its failures mean to the kit.
 * The client's own retries and limiter stay off: the writer paces itself from HubSpot's headers (pacing.ts), and the
 * client's retry decorator would log to the console and wait ten seconds blind on a 429.
 */
import { Client } from '@hubspot/api-client';
import { CrmAuthError, CrmRequestError, CrmUnavailableError, KitError } from '../../errors.ts';

export interface HubspotConnection {
  accessToken: string;
  /** HubSpot's API (https://api.hubapi.com) or the local stand-in's URL. */
  apiUrl: string;
}

/** What a refused call carries: its status, HubSpot's error body, the answer's headers. */
export interface HubspotFailure {
  status: number;
  category: string;
  message: string;
  policyName?: string;
  headers: Record<string, string>;
  /** `errors[0].context.requiredGranularScopes` of a 403 MISSING_SCOPES. */
  requiredScopes: string[];
}

/** The client's APIs, built at once: the client keeps its decorators in a process-wide singleton that a later
 *  `new Client(...)` elsewhere replaces, and an API object is decorated when it is first built. */
export function hubspotClient(connection: HubspotConnection) {
  const client = new Client({
    accessToken: connection.accessToken,
    basePath: connection.apiUrl,
    numberOfApiCallRetries: 0,
  });
  return {
    client,
    objects: { companies: client.crm.companies.batchApi, contacts: client.crm.contacts.batchApi },
    properties: client.crm.properties.coreApi,
    groups: client.crm.properties.groupsApi,
  };
}

export type HubspotApis = ReturnType<typeof hubspotClient>;

function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** The failure a call threw, if it is an answer of HubSpot's (not a connection that failed). */
export function failureOf(error: unknown): HubspotFailure | undefined {
  const e = error as { code?: unknown; body?: unknown; headers?: unknown } | undefined;
  if (typeof e?.code !== 'number' || e.code < 100 || e.code > 599) return undefined;
  const body = (typeof e.body === 'object' && e.body !== null ? e.body : {}) as Record<string, unknown>;
  const errors = Array.isArray(body['errors']) ? (body['errors'] as { context?: Record<string, unknown> }[]) : [];
  const scopes = errors.flatMap((d) =>
    Array.isArray(d.context?.['requiredGranularScopes']) ? d.context['requiredGranularScopes'] : [],
  );
  return {
    status: e.code,
    category: text(body['category']) || `HTTP_${e.code}`,
    message: text(body['message']) || `HubSpot answered ${e.code}`,
    ...(text(body['policyName']) ? { policyName: text(body['policyName']) } : {}),
    headers: (typeof e.headers === 'object' && e.headers !== null ? e.headers : {}) as Record<string, string>,
    requiredScopes: scopes.filter((s): s is string => typeof s === 'string'),
  };
}

/** Whether the same call later can succeed: 429, 5xx, or a connection that failed. */
export function isTransient(error: unknown): boolean {
  const failure = failureOf(error);
  return failure === undefined || failure.status === 429 || failure.status >= 500;
}

const TOKEN_FIX =
  'set HUBSPOT_ACCESS_TOKEN to a valid private-app access token (Settings > Integrations > Private Apps)';

/** The kit's error for a call HubSpot refused: its category and message, never the token. */
export function hubspotError(error: unknown, what: string): Error {
  // Already the kit's (the pacer gave up on a limit): said as it is.
  if (error instanceof KitError) return error;
  const failure = failureOf(error);
  if (failure === undefined) {
    const reason = (error as { code?: unknown })?.code ?? (error as Error)?.name ?? 'network error';
    return new CrmUnavailableError('hubspot', String(reason), `${what}: HubSpot could not be reached`);
  }
  const { status, category, message } = failure;
  if (status === 401) return new CrmAuthError('hubspot', category, `${what}: ${message}; ${TOKEN_FIX}`);
  if (status === 403) {
    const scopes = failure.requiredScopes.length ? ` (needs ${failure.requiredScopes.join(' or ')})` : '';
    return new CrmAuthError('hubspot', category, `${what}: ${message}${scopes}; add the scope to the private app`);
  }
  if (status === 429 || status >= 500) return new CrmUnavailableError('hubspot', category, `${what}: ${message}`);
  return new CrmRequestError('hubspot', category, `${what}: ${message}`);
}
