/**
 * The record of every call the sandbox answered (README "The oracle"), kept apart from the truth and the route
 * shapes so that both can use it without importing each other.
 */

/** What a call asked for and what it gave back, in summary (route-specific fields). */
export type CallSummary = Record<string, unknown>;

export type CallFault =
  | 'rate_limited_burst'
  | 'reset'
  | 'error'
  | 'malformed'
  /** The work was done and charged, then the answer was replaced by a 5xx. */
  | 'lost_answer_5xx'
  /** The work was done and charged, then the connection was reset without an answer. */
  | 'lost_answer_reset'
  /** An export download cut off part-way. */
  | 'truncated'
  /** A successful answer padded to a very large size (`answerPaddingBytes`): charged and answered as usual. */
  | 'padded';

export interface CallRecord {
  /** Arrival order, from 1; never reused (the record keeps the last CALL_RECORD_CAPACITY calls). */
  seq: number;
  /** Monotonic real time (performance.now) at arrival: the time the rate limiter counts with. */
  realMs: number;
  /** The sandbox clock at arrival, ISO. */
  at: string;
  method: string;
  path: string;
  /** Account of the key; undefined for unauthenticated calls and downloads. */
  account: string | undefined;
  requestId: string;
  /** HTTP status sent; null when the socket was destroyed without an answer. */
  status: number | null;
  /** Whether the call used a slot of the account rate limit. */
  rateCounted: boolean;
  credits: number;
  fault: CallFault | null;
  asked: CallSummary | undefined;
  returned: CallSummary | undefined;
}

export const CALL_RECORD_CAPACITY = 100_000;

/** The record of calls; the server appends, tests read. */
export class CallLog {
  private readonly items: CallRecord[] = [];
  private seq = 0;

  next(): number {
    return ++this.seq;
  }

  push(record: CallRecord): void {
    this.items.push(record);
    if (this.items.length > CALL_RECORD_CAPACITY) this.items.splice(0, this.items.length >> 1);
  }

  /** The sequence number of the last call so far (0 before any); pass it to `since` to see later calls. */
  get last(): number {
    return this.seq;
  }

  /** Calls recorded so far (a copy), optionally only those with `seq > after` and to `path`. */
  list(filter: { after?: number; path?: string; method?: string } = {}): CallRecord[] {
    return this.items.filter(
      (c) =>
        (filter.after === undefined || c.seq > filter.after) &&
        (filter.path === undefined || c.path === filter.path) &&
        (filter.method === undefined || c.method === filter.method),
    );
  }
}

/** What a raw handler tells the call record (its status is read from the response). */
export interface RawOutcome {
  fault?: CallFault;
  asked?: Record<string, unknown>;
  returned?: Record<string, unknown>;
}
