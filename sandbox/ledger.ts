/**
 * The credits ledger: balances per account and every charge (README "Ledger"). A charge the balance cannot
 * cover is refused whole. Entries are kept for the last LEDGER_ENTRY_CAPACITY charges; totals are exact forever.
 */

export interface LedgerEntry {
  /** ISO time from the sandbox clock. */
  at: string;
  account: string;
  /** The API key of the call; null for webhook deliveries. */
  key: string | null;
  method: string;
  /** Request path, or the delivery URL for a webhook event. */
  path: string;
  /** `req_...` of the call, or the `msg_...` webhook message id. */
  requestId: string;
  credits: number;
}

export type ChargeMeta = Omit<LedgerEntry, 'account' | 'credits'>;

export const LEDGER_ENTRY_CAPACITY = 200_000;

export class Ledger {
  readonly entries: LedgerEntry[] = [];
  private readonly balances = new Map<string, number>();
  private readonly totals = new Map<string, number>();
  private defaultAccount: string | undefined;

  /** Registers an account with its starting balance (the first one opened is the default). */
  open(account: string, credits: number): void {
    this.defaultAccount ??= account;
    this.balances.set(account, credits);
    this.totals.set(account, 0);
  }

  has(account: string): boolean {
    return this.balances.has(account);
  }

  /** Balance of `account` (default: the first account). */
  balance(account: string | undefined = this.defaultAccount): number {
    return account === undefined ? 0 : (this.balances.get(account) ?? 0);
  }

  /** Credits charged to `account`, or to all accounts when omitted. */
  total(account?: string): number {
    if (account !== undefined) return this.totals.get(account) ?? 0;
    let sum = 0;
    for (const v of this.totals.values()) sum += v;
    return sum;
  }

  setBalance(account: string, credits: number): void {
    if (!this.balances.has(account)) throw new Error(`unknown account ${account}`);
    this.balances.set(account, credits);
  }

  canAfford(account: string, credits: number): boolean {
    return credits <= 0 || this.balance(account) >= credits;
  }

  /** Charges `credits` (> 0) when the balance covers them; false (and nothing recorded) otherwise. */
  tryCharge(account: string, credits: number, meta: ChargeMeta): boolean {
    if (credits <= 0) return true;
    const balance = this.balance(account);
    if (balance < credits) return false;
    this.balances.set(account, balance - credits);
    this.totals.set(account, (this.totals.get(account) ?? 0) + credits);
    this.entries.push({ ...meta, account, credits });
    if (this.entries.length > LEDGER_ENTRY_CAPACITY) this.entries.splice(0, this.entries.length >> 1);
    return true;
  }
}
