import { gunzipSync } from 'node:zlib';
import type { Store } from '../../connectors/storage/store.ts';
import { readAll } from '../../connectors/storage/store-io.ts';
import { StateDb, stateDbProblem } from './sync-db.ts';
import type { CompanyState } from './sync-rules.ts';

/**
 * The state object of the release before the state database (`<name>/_state/run-<id>.json.gz`, one gzipped JSON),
 * read once by the first night after an upgrade into a state database, under caps (it was held in memory whole):
 * at most `LEGACY_MAX_STORED` stored and 64 times that, at most `LEGACY_MAX_INFLATED`, inflated. Its record keys
 * (`id:<id>`) become the database's (`id:"<id>"`); a key the old form made ambiguous (`id:A#2`) reads as the id `A#2`.
 */
const LEGACY_MAX_STORED = 64 * 1024 * 1024;
const LEGACY_MAX_INFLATED = 512 * 1024 * 1024;

interface LegacyObject {
  version?: unknown;
  run_id?: unknown;
  companies?: Record<string, unknown>;
  records?: Record<string, unknown>;
  resolved?: Record<string, unknown>;
}

export async function readLegacyState(
  store: Store,
  key: string,
  path: string,
  expected: { name: string; runId: string; nightAt: string },
): Promise<{ db: StateDb } | { problem: string }> {
  const info = await store.stat(key);
  if (!info) return { problem: `${key} is missing` };
  if (info.size > LEGACY_MAX_STORED) return { problem: `${key} is larger than ${LEGACY_MAX_STORED} bytes` };
  let parsed: LegacyObject;
  try {
    const raw = await readAll(await store.openRead(key));
    const cap = Math.min(LEGACY_MAX_INFLATED, 64 * Math.max(raw.length, 1024 * 1024));
    parsed = JSON.parse(gunzipSync(raw, { maxOutputLength: cap }).toString('utf8')) as LegacyObject;
  } catch {
    return { problem: `${key} is not a state object within its size caps` };
  }
  if (parsed.version !== 1 || parsed.run_id !== expected.runId) {
    return { problem: `${key}: version or run_id is not the pointer's` };
  }
  const db = StateDb.create(path, expected.name, expected.runId);
  try {
    db.transaction(() => {
      for (const [domain, company] of Object.entries(parsed.companies ?? {})) {
        db.putCompany(domain, company as CompanyState);
      }
      for (const [old, print] of Object.entries(parsed.records ?? {})) {
        const { key: recordKey, label } = legacyRecordKey(old);
        db.db
          .prepare('INSERT OR REPLACE INTO records (key, print, label) VALUES (?, ?, ?)')
          .run(recordKey, String(print), label);
      }
      for (const [from, domain] of Object.entries(parsed.resolved ?? {})) db.putResolved(from, String(domain));
    });
  } catch {
    db.close();
    return { problem: `${key} does not hold a state's fields` };
  }
  const problem = await stateDbProblem(db, { name: expected.name, runId: expected.runId }, expected.nightAt);
  if (!problem) return { db };
  db.close();
  return { problem: `${key}: ${problem}` };
}

function legacyRecordKey(old: string): { key: string; label: string } {
  if (old.startsWith('id:')) {
    const id = old.slice(3);
    return { key: `id:${JSON.stringify(id)}`, label: id };
  }
  const value = old.startsWith('value:') ? old.slice(6) : old;
  const twin = /^(.*)#(\d+)$/.exec(value);
  const base = twin ? twin[1]! : value;
  return { key: `value:${JSON.stringify(base)}${twin ? `#${twin[2]}` : ''}`, label: base };
}
