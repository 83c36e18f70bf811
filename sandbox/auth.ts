/**
 * Accounts and their API keys (spec 5): a key is sent as `X-API-KEY` (any case) or `Authorization: Bearer`.
 * Several keys may belong to one account; balances live in the ledger.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Ledger } from './ledger.ts';

export interface AccountSpec {
  id: string;
  keys: string[];
  credits: number;
}

export interface AccountInfo {
  id: string;
  keys: string[];
  balance: number;
  charged: number;
}

export const DEFAULT_ACCOUNT_ID = 'acct_default';
export const DEFAULT_KEYS = ['sk_test_1', 'sk_test_2'];
export const DEFAULT_CREDITS = 1_000_000;

/** The key a request carries, if any (`X-API-KEY` first, then `Authorization: Bearer`). */
export function extractApiKey(headers: IncomingHttpHeaders): string | undefined {
  const raw = headers['x-api-key'];
  const direct = Array.isArray(raw) ? raw[0] : raw;
  if (direct?.trim()) return direct.trim();
  const auth = headers.authorization;
  if (auth) {
    const m = /^bearer\s+(\S+)\s*$/i.exec(auth);
    if (m) return m[1];
  }
  return undefined;
}

export class Accounts {
  private readonly byKey = new Map<string, string>();
  private readonly specs = new Map<string, AccountSpec>();
  private readonly ledger: Ledger;

  constructor(specs: AccountSpec[], ledger: Ledger) {
    this.ledger = ledger;
    if (specs.length === 0) throw new Error('at least one account is needed');
    for (const spec of specs) {
      if (this.specs.has(spec.id)) throw new Error(`duplicate account ${spec.id}`);
      this.specs.set(spec.id, { id: spec.id, keys: [...spec.keys], credits: spec.credits });
      ledger.open(spec.id, spec.credits);
      for (const key of spec.keys) {
        if (this.byKey.has(key)) throw new Error(`API key ${key} is given to two accounts`);
        this.byKey.set(key, spec.id);
      }
    }
  }

  /** The account a key belongs to. */
  accountFor(key: string | undefined): string | undefined {
    return key === undefined ? undefined : this.byKey.get(key);
  }

  list(): AccountInfo[] {
    return [...this.specs.values()].map((s) => this.info(s.id)!);
  }

  info(id: string): AccountInfo | undefined {
    const spec = this.specs.get(id);
    if (!spec) return undefined;
    return { id, keys: [...spec.keys], balance: this.ledger.balance(id), charged: this.ledger.total(id) };
  }

  /** Sets an account's balance (tests use it to reach 402). */
  setCredits(id: string, credits: number): void {
    this.ledger.setBalance(id, credits);
  }

  addCredits(id: string, credits: number): void {
    this.ledger.setBalance(id, this.ledger.balance(id) + credits);
  }

  /** Adds a key to an account. */
  addKey(id: string, key: string): void {
    const spec = this.specs.get(id);
    if (!spec) throw new Error(`unknown account ${id}`);
    if (this.byKey.has(key)) throw new Error(`API key ${key} is already in use`);
    spec.keys.push(key);
    this.byKey.set(key, id);
  }
}
