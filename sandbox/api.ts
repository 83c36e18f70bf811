/** The shapes shared by the server and the route modules. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Accounts } from './auth.ts';
import type { CallLog, RawOutcome } from './call-log.ts';
import type { ExportService } from './exports.ts';
import type { Faults } from './faults.ts';
import type { Ledger } from './ledger.ts';
import type { DataStore } from './store.ts';
import type { WebhookService } from './webhooks.ts';

export interface ApiContext {
  store: DataStore;
  ledger: Ledger;
  accounts: Accounts;
  faults: Faults;
  exports: ExportService;
  webhooks: WebhookService;
  calls: CallLog;
  clock: () => number;
  /** The sandbox's base URL (known once it listens). */
  baseUrl(): string;
}

export interface ApiRequest {
  method: string;
  path: string;
  params: Record<string, string>;
  query: URLSearchParams;
  /** Parsed JSON body (undefined when the request had none). */
  body: unknown;
  account: string;
  key: string;
  requestId: string;
  /** Sequence number of this API request (fault decisions per address use it). */
  seq: number;
  /** The sandbox clock, read once per request. */
  now: number;
  /** Charges the account; throws 402 (nothing charged) when the balance cannot cover it. */
  charge(credits: number): void;
  /** Records, for the call record (README "The oracle"), what the call asked for and returned, in summary. */
  note(asked: Record<string, unknown>, returned: Record<string, unknown>): void;
}

export interface ApiResponse {
  status?: number;
  body: unknown;
  headers?: Record<string, string>;
}

export type Handler = (req: ApiRequest, ctx: ApiContext) => ApiResponse | Promise<ApiResponse>;

/** A handler that writes the response itself and needs no API key (export downloads). */
export type RawHandler = (
  req: IncomingMessage,
  res: ServerResponse,
  ctx: ApiContext,
  info: { requestId: string; params: Record<string, string>; query: URLSearchParams },
) => Promise<RawOutcome | undefined>;

export interface Route {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** Path with `:name` segments, for example `/v1/signals/:id`. */
  path: string;
  handler?: Handler;
  raw?: RawHandler;
}
