/** Run ids of scheduled pushes: pure functions shared by the workflow and the CLI (no Temporal imports). */

/** `2026-03-01T12:00:00.000Z` → `20260301T120000Z` (milliseconds kept only when not zero: `20260301T120000.250Z`). */
export function runIdOf(iso: string): string {
  const compact = new Date(iso).toISOString().replace(/[-:]/g, '');
  return compact.endsWith('.000Z') ? `${compact.slice(0, -5)}Z` : compact;
}

/** A backfill's run id: `backfill-<from>-<to>` in the compact form (the same window always writes the same keys). */
export function backfillRunId(window: { from: string; to: string }): string {
  return `backfill-${runIdOf(window.from)}-${runIdOf(window.to)}`;
}
