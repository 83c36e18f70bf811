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
  /**
   * Stop reading the call before its body and never answer it, until the caller goes away (a worker killed with the
   * call in flight, an upload cut): the call is never acted on.
   */
  stall?: boolean;
  /** How many matching calls get it (default 1; Infinity until cleared). */
  times?: number;
}

interface Armed extends RequestFault {
  left: number;
}

export class Faults {
  private armed: Armed[] = [];
  /** Calls stalled so far. */
  stalled = 0;

  add(fault: RequestFault): void {
    this.armed.push({ ...fault, left: fault.times ?? 1 });
  }

  clear(): void {
    this.armed = [];
  }

  /** Whether this call is to stall (counted), looked at before its body is read. */
  takeStall(method: string, path: string): boolean {
    const stall = this.find(method, path, true);
    if (stall) this.stalled++;
    return stall !== undefined;
  }

  /** The fault this call gets, if any (counted). */
  take(method: string, path: string): RequestFault | undefined {
    return this.find(method, path, false);
  }

  private find(method: string, path: string, stall: boolean): RequestFault | undefined {
    const found = this.armed.find(
      (f) =>
        f.left > 0 &&
        (f.stall === true) === stall &&
        (f.method === undefined || f.method.toUpperCase() === method) &&
        (f.path === undefined ? !path.includes('/oauth2/token') : path.includes(f.path)),
    );
    if (!found) return undefined;
    found.left--;
    this.armed = this.armed.filter((f) => f.left > 0);
    return found;
  }
}
