/** What a paid call's marker says that the reconciliation reads (a `CallMarkerRecord`, unsaved-answers.ts). */
export interface MarkerBalance {
  batch: number;
  attempt?: number;
  started_at: string;
  credits: number | null;
  balance_after?: number;
  answered_at?: string;
}

/**
 * The cost of paid calls whose answer nobody read (a worker killed after the service answered and charged), from the
 * account balances the run's other answers reported (`x-credits-remaining`, right after each call's charge).
 *
 * The balance only falls while the run pays: each answered call shows the balance just before its charge
 * (`balance_after + credits`) and just after. Between the highest "before" and the lowest "after" the account was
 * charged exactly that difference; the answered calls account for their own credits, so what is left was charged by
 * the calls of unknown cost, provided each of them lies inside that span: an answered call of the run was answered
 * before it started, and a later attempt of its batch (started once Temporal gave up on it) was answered. Exact when
 * nothing else charged the account meanwhile; with something else charging it, at most this (a bound). A run where
 * any call of unknown cost lies outside the span, or whose answers carried no balance, is not reconciled: its calls
 * stay of unknown cost (docs/paid-answers.md#the-bound).
 */
export interface BalanceSeen {
  /** Every answered call of the run (its answer saved or lost), with what it cost. */
  answered: MarkerBalance[];
  /** The calls of unknown cost (undefined: a marker that could not be read). */
  unknown: (MarkerBalance | undefined)[];
}

interface Point {
  batch: number;
  attempt: number;
  started: number;
  answered: number;
  before: number;
  after: number;
  credits: number;
}

function pointOf(record: MarkerBalance): Point | undefined {
  const { balance_after: after, credits } = record;
  const answered = Date.parse(record.answered_at ?? '');
  const started = Date.parse(record.started_at);
  if (typeof after !== 'number' || typeof credits !== 'number' || !Number.isFinite(answered + started))
    return undefined;
  return {
    batch: record.batch,
    attempt: record.attempt ?? 1,
    started,
    answered,
    before: after + credits,
    after,
    credits,
  };
}

/** The unknown calls' credits and count, or undefined when one of them cannot be placed inside the span. */
export function reconcileFromBalances(seen: BalanceSeen): { calls: number; credits: number } | undefined {
  if (seen.unknown.length === 0) return undefined;
  const points: Point[] = [];
  for (const record of seen.answered) {
    const point = pointOf(record);
    if (!point) return undefined; // an answer without a balance: the span cannot be told
    points.push(point);
  }
  if (points.length === 0) return undefined;
  for (const unknown of seen.unknown) {
    if (!unknown) return undefined;
    const started = Date.parse(unknown.started_at);
    const attempt = unknown.attempt ?? 1;
    const answeredBefore = points.some((p) => p.answered < started);
    const retriedAfter = points.some((p) => p.batch === unknown.batch && p.attempt > attempt && p.started > started);
    if (!answeredBefore || !retriedAfter) return undefined;
  }
  if (!fallsInTime(points)) return undefined;
  const highest = Math.max(...points.map((p) => p.before));
  const lowest = Math.min(...points.map((p) => p.after));
  const known = points.reduce((sum, p) => sum + p.credits, 0);
  const credits = highest - lowest - known;
  // A balance that rose (credits added meanwhile) or answers that disagree: nothing can be said.
  if (!Number.isInteger(credits) || credits < 0) return undefined;
  return { calls: seen.unknown.length, credits };
}

/**
 * Whether the balances fall as time goes: a call started after others were answered was charged after them, so the
 * balance before its charge is at most the lowest those answers reported. Credits added meanwhile break it.
 */
function fallsInTime(points: Point[]): boolean {
  const byAnswer = [...points].sort((a, b) => a.answered - b.answered);
  const lowestSoFar: number[] = [];
  for (const p of byAnswer) lowestSoFar.push(Math.min(p.after, lowestSoFar.at(-1) ?? Number.POSITIVE_INFINITY));
  for (const q of points) {
    // The answers read before q started: a prefix of byAnswer.
    let low = 0;
    let high = byAnswer.length;
    while (low < high) {
      const mid = (low + high) >> 1;
      if ((byAnswer[mid] as Point).answered < q.started) low = mid + 1;
      else high = mid;
    }
    if (low > 0 && q.before > (lowestSoFar[low - 1] as number)) return false;
  }
  return true;
}
