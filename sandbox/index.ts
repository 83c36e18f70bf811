/**
 * signal-kit's local Signal Data Service. `startSandbox()` starts it on 127.0.0.1; see sandbox/README.md for
 * every choice it makes where the spec is silent. It imports nothing from the kit.
 */
import type { AddressInfo } from 'node:net';
import type { ApiContext, Route } from './api.ts';
import {
  type AccountInfo,
  type AccountSpec,
  Accounts,
  DEFAULT_ACCOUNT_ID,
  DEFAULT_CREDITS,
  DEFAULT_KEYS,
} from './auth.ts';
import type { IntentSurfacing } from './data/intent.ts';
import { type EnrichSignal, toLookupSignal } from './data/signals.ts';
import { DEFAULT_EXPORT_TIMING, ExportService, type ExportTiming } from './exports.ts';
import { type FaultOptions, Faults } from './faults.ts';
import { Ledger } from './ledger.ts';
import { RateLimiter } from './rate-limit.ts';
import { companyRoutes } from './routes/companies.ts';
import { contactRoutes } from './routes/contacts.ts';
import { emailRoutes } from './routes/emails.ts';
import { intentRoutes } from './routes/intent.ts';
import { signalRoutes } from './routes/signals.ts';
import { webhookRoutes } from './routes/webhooks.ts';
import { createSandboxServer } from './server.ts';
import { DataStore } from './store.ts';
import {
  CallLog,
  type CallRecord,
  type ContactTruth,
  companyDomainOf,
  companySearch,
  companySignals,
  contactSearch,
  contactSignals,
  type DomainTruth,
  type EmailTruth,
  type ExportRequest,
  type ExportTruth,
  emailVerifications,
  intentContacts,
  intentExport,
  type SignalWindow,
} from './truth.ts';
import { DEFAULT_RETRY_DELAYS_MS, type DeliveryAttempt, WebhookService } from './webhooks.ts';

export type { AccountInfo, AccountSpec } from './auth.ts';
export { DEFAULT_ACCOUNT_ID, DEFAULT_CREDITS, DEFAULT_KEYS } from './auth.ts';
export type { IntentItem, IntentSurfacing } from './data/intent.ts';
export type { EnrichSignal as SandboxSignal } from './data/signals.ts';
export type { ExportTiming } from './exports.ts';
export { DEFAULT_EXPORT_TIMING } from './exports.ts';
export type { FaultOptions } from './faults.ts';
export type { Ledger, LedgerEntry } from './ledger.ts';
export { SANDBOX_EPOCH_MS } from './time.ts';
export type {
  CallFault,
  CallRecord,
  CallSummary,
  ContactTruth,
  DomainTruth,
  EmailTruth,
  ExportRequest,
  ExportTruth,
  SignalWindow,
  TruthSignal,
} from './truth.ts';
export type { DeliveryAttempt, WebhookPayload } from './webhooks.ts';
export { DEFAULT_RETRY_DELAYS_MS, signWebhook } from './webhooks.ts';

export interface SandboxOptions {
  /** 0 (default) picks a free port. The server binds 127.0.0.1 only. */
  port?: number;
  /** All synthetic data and fault decisions derive from it (default 1). */
  seed?: number;
  /** Per account, shared by its keys (default 300; 0 or Infinity = off). */
  rateLimitPerMinute?: number;
  /** Length of the sliding rate-limit window (default 60,000 ms; tests shorten it). */
  rateLimitWindowMs?: number;
  /** Starting balance of the default account (default 1,000,000). */
  credits?: number;
  /** Replaces the default account. */
  accounts?: AccountSpec[];
  faults?: FaultOptions;
  /** Epoch ms; drives signal visibility, export states, link expiry (default Date.now). */
  clock?: () => number;
  exportTiming?: Partial<ExportTiming>;
  /** Webhook delivery schedule: attempt i waits delays[i] ms (default [0, 1000, 5000, 30000]). */
  webhookRetryDelaysMs?: number[];
  /** Per-attempt webhook delivery timeout (default 10,000 ms). */
  webhookTimeoutMs?: number;
  /** Fixes every export's line count (benchmarks use it for multi-GiB downloads). */
  exportRows?: number;
  /** A share of each topic's buyer-intent contacts appears only over `days` after `from` (default: none). */
  intentSurfacing?: IntentSurfacing;
}

export interface EmitOptions {
  /** How many signals to create (default 1). */
  count?: number;
  /** Types to draw from (default: the company's usual mix). */
  signal_types?: string[];
  /** Company that gets the signals (default: catalog companies). */
  domain?: string;
}

export interface SandboxAccounts {
  list(): AccountInfo[];
  get(id?: string): AccountInfo | undefined;
  setCredits(id: string, credits: number): void;
  addCredits(id: string, credits: number): void;
  addKey(id: string, key: string): void;
}

/** The sandbox as an oracle for tests (README "The oracle"). In-process only. */
export interface SandboxTruth {
  /** Signals that exist for each domain in a window at the clock (or `window.at`), filters applied as enrich does. */
  companySignals(domains: string[], window?: SignalWindow): DomainTruth[];
  /** What contact enrich finds for each email or LinkedIn profile URL: the person's signals in the window. */
  contactSignals(inputs: string[], window?: SignalWindow): ContactTruth[];
  /** The domain a company name or LinkedIn company URL resolves to in `POST /v1/companies/enrich`; null for none. */
  companyDomainOf(identifier: { company_name: string } | { linkedin_url: string }): string | null;
  /** Each address's verification result and price when its upstream check succeeds. */
  emailVerifications(emails: string[]): EmailTruth[];
  /** Rows and price of an export submitted now with this request. */
  intentExport(request: ExportRequest): ExportTruth;
  /** Every company a company search body matches now (or at `at`), newest first, without the endpoint's cap. */
  companySearch(body: Record<string, unknown>, at?: number): ReturnType<typeof companySearch>;
  /** Every contact a contact search body matches now (or at `at`), newest first, without the endpoint's cap. */
  contactSearch(body: Record<string, unknown>, at?: number): ReturnType<typeof contactSearch>;
  /** Every buyer-intent contact of every page for this body now (or at `at`). */
  intentContacts(body: Record<string, unknown>, at?: number): ReturnType<typeof intentContacts>;
  /** Every call answered (or dropped), oldest first, optionally those after `after` (a `seq`) and to `path`. */
  calls(filter?: { after?: number; path?: string; method?: string }): CallRecord[];
  /** The `seq` of the latest call (0 before any): a mark to pass as `after` later. */
  lastCall(): number;
  ledger: Ledger;
}

export interface Sandbox {
  url: string;
  port: number;
  stop(): Promise<void>;
  ledger: Ledger;
  accounts: SandboxAccounts;
  /** Creates signals detected now and delivers them to matching active webhook subscriptions. */
  emitSignals(options?: EmitOptions): EnrichSignal[];
  /** Replaces the fault options (`setFaults({})` turns every fault off). */
  setFaults(faults: FaultOptions): void;
  /** Every webhook delivery attempt (the last 10,000). */
  deliveries: DeliveryAttempt[];
  /** Resolves when no webhook delivery is scheduled or in flight. */
  webhooksSettled(): Promise<void>;
  clock: () => number;
  seed: number;
  truth: SandboxTruth;
}

export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const seed = options.seed ?? 1;
  const clock = options.clock ?? Date.now;
  const ledger = new Ledger();
  const accounts = new Accounts(
    options.accounts ?? [
      { id: DEFAULT_ACCOUNT_ID, keys: [...DEFAULT_KEYS], credits: options.credits ?? DEFAULT_CREDITS },
    ],
    ledger,
  );
  const faults = new Faults(seed, options.faults);
  const store = new DataStore(seed, clock);
  store.intentSurfacing = options.intentSurfacing;
  const exports = new ExportService({
    seed,
    catalog: () => store.catalog,
    clock,
    faults,
    timing: { ...DEFAULT_EXPORT_TIMING, ...options.exportTiming },
    exportRows: options.exportRows,
  });
  const webhooks = new WebhookService({
    seed,
    ledger,
    clock,
    retryDelaysMs: options.webhookRetryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS,
    timeoutMs: options.webhookTimeoutMs ?? 10_000,
  });
  const calls = new CallLog();
  const limiter = new RateLimiter(options.rateLimitPerMinute ?? 300, options.rateLimitWindowMs ?? 60_000);
  let baseUrl = '';
  const ctx: ApiContext = {
    store,
    ledger,
    accounts,
    faults,
    exports,
    webhooks,
    calls,
    clock,
    baseUrl: () => baseUrl,
  };
  const routes: Route[] = [
    ...companyRoutes,
    ...contactRoutes,
    ...signalRoutes,
    ...intentRoutes,
    ...emailRoutes,
    ...webhookRoutes,
  ];
  const { server, closeAll } = createSandboxServer({ ctx, routes, limiter, seed });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  baseUrl = `http://127.0.0.1:${port}`;

  let stopping: Promise<void> | undefined;
  return {
    url: baseUrl,
    port,
    seed,
    clock,
    ledger,
    deliveries: webhooks.deliveries,
    accounts: {
      list: () => accounts.list(),
      get: (id = DEFAULT_ACCOUNT_ID) => accounts.info(id),
      setCredits: (id, credits) => accounts.setCredits(id, credits),
      addCredits: (id, credits) => accounts.addCredits(id, credits),
      addKey: (id, key) => accounts.addKey(id, key),
    },
    emitSignals(opts: EmitOptions = {}): EnrichSignal[] {
      const emitOpts: { count: number; signalTypes?: string[]; domain?: string } = { count: opts.count ?? 1 };
      if (opts.signal_types) emitOpts.signalTypes = opts.signal_types;
      if (opts.domain !== undefined) emitOpts.domain = opts.domain;
      const records = store.emit(emitOpts, clock());
      webhooks.dispatch(records);
      return records.map(toLookupSignal);
    },
    setFaults: (f) => faults.set(f),
    truth: {
      companySignals: (domains, window) => companySignals({ store, exports, clock }, domains, window),
      contactSignals: (inputs, window) => contactSignals({ store, exports, clock }, inputs, window),
      companyDomainOf: (identifier) => companyDomainOf({ store, exports, clock }, identifier),
      emailVerifications: (emails) => emailVerifications({ store, exports, clock }, emails),
      intentExport: (request) => intentExport({ store, exports, clock }, request),
      companySearch: (body, at) => companySearch({ store, exports, clock }, body, at),
      contactSearch: (body, at) => contactSearch({ store, exports, clock }, body, at),
      intentContacts: (body, at) => intentContacts({ store, exports, clock }, body, at),
      calls: (filter) => calls.list(filter),
      lastCall: () => calls.last,
      ledger,
    },
    webhooksSettled: () => webhooks.settled(),
    stop(): Promise<void> {
      stopping ??= new Promise<void>((resolve) => {
        webhooks.stop();
        exports.abort.abort();
        server.close(() => resolve());
        closeAll();
      });
      return stopping;
    },
  };
}
