import { KitError } from '../../connectors/errors.ts';
import type { SignalClient } from '../../connectors/signal-api/client.ts';
import type { Store } from '../../connectors/storage/store.ts';
import { readJsonIfPresent } from '../../connectors/storage/store-io.ts';
import { syncResolvedKey, syncResolveKey } from './layout.ts';
import type { SyncLookup, SyncResolveRequest } from './types.ts';

/**
 * After this time no signal exists: a call asking only for signals detected after it returns the company and no
 * signal, and a call with no result is free (spec section 8), so resolving a row's company costs nothing.
 */
const NOTHING_AFTER = '2999-01-01T00:00:00Z';

/**
 * Resolves resolve batch `index`: each LinkedIn company URL or name to its company's domain, with one free
 * `POST /v1/companies/enrich` each (paced by the account's limiter like every call). A company the service does not
 * know, or a value it refuses, resolves to null. Writes `resolved-<index>.json`; a repeated batch that finds it calls
 * nothing. Returns how many resolved.
 */
export async function resolveSyncCompanies(
  client: SignalClient,
  store: Store,
  request: SyncResolveRequest,
): Promise<{ index: number; resolved: number }> {
  const { run, index } = request;
  const done = await readJsonIfPresent<Record<string, string | null>>(store, syncResolvedKey(run, index));
  if (done) return { index, resolved: Object.values(done).filter((domain) => domain !== null).length };
  const lookups = JSON.parse(await store.readText(syncResolveKey(run, index))) as SyncLookup[];
  const found: Record<string, string | null> = {};
  for (const lookup of lookups) {
    try {
      const answer = await client.enrichCompany({
        [lookup.role]: lookup.send,
        detected_after: NOTHING_AFTER,
        limit: 1,
      });
      found[lookup.key] = answer.company?.domain ? answer.company.domain.toLowerCase() : null;
    } catch (error) {
      if (!(error instanceof KitError) || !error.rule.perRecord) throw error;
      found[lookup.key] = null;
    }
  }
  await store.writeText(syncResolvedKey(run, index), JSON.stringify(found), { contentType: 'application/json' });
  return { index, resolved: Object.values(found).filter((domain) => domain !== null).length };
}
