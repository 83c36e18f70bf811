import type { PushBatchDomain } from './types.ts';

/** A bulk call before it is numbered: its lower bound and its domains. */
export interface PackedCall {
  detected_after: string | null;
  domains: PushBatchDomain[];
}

/**
 * Packs domains into bulk calls of at most `size`, keeping calls full:
 * - domains that need their whole history (`start` null) go together, never with others (their call has no
 *   `detected_after`, and a domain with a watermark would be re-read from the beginning);
 * - every other group of domains that start at the same time fills whole calls on its own (no overlap);
 * - what is left of each group (fewer than `size`) is packed with its neighbours in time order into shared calls,
 *   each asking from its oldest start. A domain above that start pays for re-reading the signals in between,
 *   which the fetch drops as already pushed: that is the overlap the manifest reports.
 *
 * Calls = ceil(domains without a start / size) + ceil(domains with one / size), at most ceil(domains / size) + 1,
 * since the leftovers are packed densely. The domains of one call get one watermark from its answer, so the next run finds them in one
 * group again: leftovers merge instead of fragmenting run after run.
 */
export function packCalls(domains: readonly PushBatchDomain[], size: number): { calls: PackedCall[]; mixed: number } {
  const groups = new Map<string, PushBatchDomain[]>();
  for (const entry of domains) {
    const key = entry.start ?? '';
    let group = groups.get(key);
    if (!group) {
      group = [];
      groups.set(key, group);
    }
    group.push(entry);
  }
  const calls: PackedCall[] = [];
  const fresh = groups.get('') ?? [];
  for (let i = 0; i < fresh.length; i += size) calls.push({ detected_after: null, domains: fresh.slice(i, i + size) });

  const keys = [...groups.keys()].filter((key) => key !== '').sort((a, b) => Date.parse(a) - Date.parse(b));
  const leftovers: PushBatchDomain[] = [];
  for (const key of keys) {
    const group = groups.get(key) ?? [];
    const whole = group.length - (group.length % size);
    for (let i = 0; i < whole; i += size) calls.push({ detected_after: key, domains: group.slice(i, i + size) });
    leftovers.push(...group.slice(whole));
  }
  let mixed = 0;
  for (let i = 0; i < leftovers.length; i += size) {
    const chunk = leftovers.slice(i, i + size);
    const lowest = chunk[0]!.start;
    for (const entry of chunk) if (entry.start !== lowest) mixed += 1;
    calls.push({ detected_after: lowest, domains: chunk });
  }
  return { calls, mixed };
}
