/**
 * Faults on demand, matched against each incoming call before it is authenticated: an outage (5xx, Salesforce's
 * `SERVER_UNAVAILABLE` or an HTML page from the load balancer), a 429, or a cut connection, for the next `times`
 * calls whose method and path match, or the answer lost after the call was acted on. Record-level faults (deleted, locked, validation rule) live with the records.
 */

export interface RequestFault {
  /** Only calls of this method (default any). */
  method?: string;
  /** Only calls whose path contains this (default any call but the token endpoint's). */
  path?: string;
  /** The answer's status (503, 500, 429 …); ignored with `drop`. */
  status?: number;
  errorCode?: string;
  message?: string;
  /** `Retry-After` in seconds on the answer. */
  retryAfterSeconds?: number;
  /** Answer an HTML page instead of Salesforce's JSON error list (an outage in front of the API). */
  html?: boolean;
  /** Close the connection without an answer (after reading the request). */
  drop?: boolean;
  /** Act on the call, then close the connection before its answer (the answer lost on its way: a job created unseen). */
  dropAnswer?: boolean;
  /** How many matching calls get it (default 1; Infinity until cleared). */
  times?: number;
}

interface Armed extends RequestFault {
  left: number;
}

export class Faults {
  private armed: Armed[] = [];

  add(fault: RequestFault): void {
    this.armed.push({ ...fault, left: fault.times ?? 1 });
  }

  clear(): void {
    this.armed = [];
  }

  /** The fault this call gets, if any (counted). */
  take(method: string, path: string): RequestFault | undefined {
    const found = this.armed.find(
      (f) =>
        f.left > 0 &&
        (f.method === undefined || f.method.toUpperCase() === method) &&
        (f.path === undefined ? !path.includes('/oauth2/token') : path.includes(f.path)),
    );
    if (!found) return undefined;
    found.left--;
    this.armed = this.armed.filter((f) => f.left > 0);
    return found;
  }
}
