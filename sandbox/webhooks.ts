/**
 * Webhook subscriptions and deliveries (spec 6; README "Webhook subscriptions"). Deliveries are HTTP POSTs of
 * the spec 6 payload, signed with Standard Webhooks headers: `webhook-signature: v1,<base64 HMAC-SHA256 of
 * "<webhook-id>.<webhook-timestamp>.<body>" keyed with the base64-decoded whsec_ secret>`. A non-2xx answer or
 * a connection error is retried on the configured delays; the first 2xx costs 1 credit, retries are free.
 */
import { createHash, createHmac } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { hexToUuid, type SignalRecord } from './data/signals.ts';
import type { Ledger } from './ledger.ts';
import { hash2, hashString, hex8 } from './random.ts';
import { iso, isoZ } from './time.ts';

export interface Subscription {
  webhook_id: string;
  account: string;
  url: string;
  /** Empty = every type. */
  signal_types: string[];
  description: string | null;
  status: 'active' | 'paused';
  secret: string;
  created_at: string;
  updated_at: string;
}

export type SubscriptionView = Omit<Subscription, 'account' | 'secret'> & { secret?: string };

export interface DeliveryAttempt {
  webhook_id: string;
  /** The `webhook-id` header: the same for every attempt of one event. */
  message_id: string;
  signal_id: string;
  url: string;
  attempt: number;
  at: string;
  status_code: number | null;
  error: string | null;
  delivered: boolean;
  test: boolean;
  credits: number;
}

export interface WebhookPayload {
  event: 'signal.created';
  signal: {
    id: string;
    type: string;
    subtype: string;
    company: { name: string; domain: string };
    title: string;
    detected_at: string;
    source: string;
    data: Record<string, unknown>;
  };
  webhook_id: string;
  delivered_at: string;
  test?: true;
}

export const DEFAULT_RETRY_DELAYS_MS = [0, 1_000, 5_000, 30_000];
export const DELIVERY_LOG_CAPACITY = 10_000;
export const SUBSCRIPTIONS_PER_ACCOUNT = 1_000;

export interface WebhookServiceOptions {
  seed: number;
  ledger: Ledger;
  clock: () => number;
  retryDelaysMs: number[];
  timeoutMs: number;
}

/** Standard Webhooks signature header value for one message. */
export function signWebhook(secret: string, id: string, timestampS: number, body: string): string {
  const key = Buffer.from(secret.startsWith('whsec_') ? secret.slice(6) : secret, 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestampS}.${body}`).digest('base64')}`;
}

export function toPayload(rec: SignalRecord, webhookId: string, deliveredAt: number, test = false): WebhookPayload {
  const p: WebhookPayload = {
    event: 'signal.created',
    signal: {
      id: hexToUuid(rec.hex),
      type: rec.info.type,
      subtype: rec.subtype,
      company: { name: rec.company.name, domain: rec.company.domain },
      title: rec.name || String(rec.data['summary'] ?? ''),
      detected_at: isoZ(rec.t),
      source: rec.info.source,
      data: rec.data,
    },
    webhook_id: webhookId,
    delivered_at: iso(deliveredAt),
  };
  if (test) p.test = true;
  return p;
}

interface PostResult {
  status: number | null;
  error: string | null;
}

export class WebhookService {
  readonly subscriptions = new Map<string, Subscription>();
  readonly deliveries: DeliveryAttempt[] = [];
  private readonly opts: WebhookServiceOptions;
  private counter = 0;
  private messages = 0;
  private pending = 0;
  private waiters: (() => void)[] = [];
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly inflight = new Set<AbortController>();
  private stopped = false;

  constructor(opts: WebhookServiceOptions) {
    this.opts = opts;
  }

  private nextId(prefix: string, salt: string): string {
    const n = ++this.counter;
    const h = hashString(salt, this.opts.seed);
    return `${prefix}${hex8(hash2(h, n))}${hex8(hash2(n, h))}`;
  }

  create(account: string, url: string, signalTypes: string[], description: string | null): Subscription | 'limit' {
    let owned = 0;
    for (const s of this.subscriptions.values()) if (s.account === account) owned++;
    if (owned >= SUBSCRIPTIONS_PER_ACCOUNT) return 'limit';
    const id = this.nextId('wh_', 'webhook');
    const secretBytes = createHash('sha256').update(`whsec:${this.opts.seed}:${id}`).digest().subarray(0, 24);
    const now = iso(this.opts.clock());
    const sub: Subscription = {
      webhook_id: id,
      account,
      url,
      signal_types: [...new Set(signalTypes)],
      description,
      status: 'active',
      secret: `whsec_${secretBytes.toString('base64')}`,
      created_at: now,
      updated_at: now,
    };
    this.subscriptions.set(id, sub);
    return sub;
  }

  get(account: string, id: string): Subscription | undefined {
    const s = this.subscriptions.get(id);
    return s && s.account === account ? s : undefined;
  }

  list(account: string): Subscription[] {
    return [...this.subscriptions.values()].filter((s) => s.account === account);
  }

  update(
    sub: Subscription,
    patch: { url?: string; signal_types?: string[]; description?: string | null; status?: 'active' | 'paused' },
  ): Subscription {
    if (patch.url !== undefined) sub.url = patch.url;
    if (patch.signal_types !== undefined) sub.signal_types = [...new Set(patch.signal_types)];
    if (patch.description !== undefined) sub.description = patch.description;
    if (patch.status !== undefined) sub.status = patch.status;
    sub.updated_at = iso(this.opts.clock());
    return sub;
  }

  delete(sub: Subscription): void {
    this.subscriptions.delete(sub.webhook_id);
  }

  static view(sub: Subscription, withSecret = false): SubscriptionView {
    const { account: _a, secret, ...rest } = sub;
    return withSecret ? { ...rest, secret } : rest;
  }

  /** Delivers each new signal to every active subscription of a matching type. */
  dispatch(records: SignalRecord[]): number {
    let scheduled = 0;
    for (const rec of records) {
      for (const sub of this.subscriptions.values()) {
        if (sub.status !== 'active') continue;
        if (sub.signal_types.length > 0 && !sub.signal_types.includes(rec.info.type)) continue;
        this.startDelivery(sub.webhook_id, rec);
        scheduled++;
      }
    }
    return scheduled;
  }

  /** Sends one test event now (one attempt, free). */
  async test(sub: Subscription, sample: SignalRecord): Promise<PostResult & { delivered: boolean }> {
    const messageId = `msg_${hex8(++this.messages)}${hex8(hash2(this.messages, hashString('test', this.opts.seed)))}`;
    const r = await this.attempt(sub, sample, messageId, 1, true);
    return { ...r, delivered: r.status !== null && r.status >= 200 && r.status < 300 };
  }

  private tests = 0;

  /** Numbers the sample signals of test deliveries. */
  nextTestNumber(): number {
    return ++this.tests;
  }

  /** Resolves when no delivery is scheduled or in flight. */
  settled(): Promise<void> {
    if (this.pending === 0) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  stop(): void {
    this.stopped = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    for (const a of this.inflight) a.abort();
    this.pending = 0;
    this.release();
  }

  private release(): void {
    if (this.pending > 0) return;
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }

  private startDelivery(webhookId: string, rec: SignalRecord): void {
    const n = ++this.messages;
    const messageId = `msg_${hex8(hash2(hashString('msg', this.opts.seed), n))}${hex8(n)}`;
    this.pending++;
    const finish = (): void => {
      this.pending = Math.max(0, this.pending - 1);
      this.release();
    };
    const run = async (attemptNo: number): Promise<void> => {
      if (this.stopped) return;
      const sub = this.subscriptions.get(webhookId);
      if (sub?.status !== 'active') return finish();
      if (!this.opts.ledger.canAfford(sub.account, 1)) {
        this.log(sub, rec, messageId, attemptNo, { status: null, error: 'insufficient_credits' }, false, 0);
        return finish();
      }
      const r = await this.attempt(sub, rec, messageId, attemptNo, false);
      if (this.stopped) return;
      if (r.status !== null && r.status >= 200 && r.status < 300) return finish();
      if (attemptNo < this.opts.retryDelaysMs.length) return schedule(attemptNo + 1);
      return finish();
    };
    const schedule = (attemptNo: number): void => {
      const delay = Math.max(0, this.opts.retryDelaysMs[attemptNo - 1] ?? 0);
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        void run(attemptNo);
      }, delay);
      this.timers.add(timer);
    };
    schedule(1);
  }

  private async attempt(
    sub: Subscription,
    rec: SignalRecord,
    messageId: string,
    attemptNo: number,
    test: boolean,
  ): Promise<PostResult> {
    const nowMs = Date.now();
    const body = JSON.stringify(toPayload(rec, sub.webhook_id, nowMs, test));
    const ts = Math.floor(nowMs / 1000);
    const r = await this.post(sub.url, body, {
      'content-type': 'application/json',
      'user-agent': 'signal-kit-sandbox/1',
      'webhook-id': messageId,
      'webhook-timestamp': String(ts),
      'webhook-signature': signWebhook(sub.secret, messageId, ts, body),
    });
    const ok = r.status !== null && r.status >= 200 && r.status < 300;
    let credits = 0;
    if (ok && !test) {
      const charged = this.opts.ledger.tryCharge(sub.account, 1, {
        at: iso(this.opts.clock()),
        key: null,
        method: 'POST',
        path: sub.url,
        requestId: messageId,
      });
      credits = charged ? 1 : 0;
    }
    this.log(sub, rec, messageId, attemptNo, r, test, credits);
    return r;
  }

  private log(
    sub: Subscription,
    rec: SignalRecord,
    messageId: string,
    attemptNo: number,
    r: PostResult,
    test: boolean,
    credits: number,
  ): void {
    this.deliveries.push({
      webhook_id: sub.webhook_id,
      message_id: messageId,
      signal_id: hexToUuid(rec.hex),
      url: sub.url,
      attempt: attemptNo,
      at: iso(Date.now()),
      status_code: r.status,
      error: r.error,
      delivered: r.status !== null && r.status >= 200 && r.status < 300,
      test,
      credits,
    });
    if (this.deliveries.length > DELIVERY_LOG_CAPACITY) this.deliveries.splice(0, DELIVERY_LOG_CAPACITY >> 2);
  }

  private post(url: string, body: string, headers: Record<string, string>): Promise<PostResult> {
    return new Promise((resolve) => {
      let target: URL;
      try {
        target = new URL(url);
      } catch {
        resolve({ status: null, error: 'invalid_url' });
        return;
      }
      const abort = new AbortController();
      this.inflight.add(abort);
      const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
      let settled = false;
      const done = (r: PostResult): void => {
        if (settled) return;
        settled = true;
        this.inflight.delete(abort);
        resolve(r);
      };
      const req = send(
        target,
        {
          method: 'POST',
          agent: false,
          headers: { ...headers, 'content-length': Buffer.byteLength(body) },
          signal: abort.signal,
          timeout: this.opts.timeoutMs,
        },
        (res) => {
          res.resume();
          res.on('end', () => done({ status: res.statusCode ?? null, error: null }));
          res.on('error', () => done({ status: res.statusCode ?? null, error: null }));
        },
      );
      req.on('timeout', () => {
        req.destroy(new Error('timeout'));
      });
      req.on('error', (err: NodeJS.ErrnoException) => {
        done({ status: null, error: err.message === 'timeout' ? 'timeout' : (err.code ?? err.message) });
      });
      req.end(body);
    });
  }
}
