import type { Store } from '../../connectors/storage/store.ts';
import type { Scratch } from '../run/part-files.ts';
import { readPartLines } from '../run/parts.ts';
import { answerKey, workPrefix } from '../run/scheduled-layout.ts';
import { uncommittedSyncRun } from '../state/stopped-run.ts';
import type { StateDb } from '../state/sync-db.ts';
import { mergeAnswer } from '../state/sync-rules.ts';
import { commitSyncState, openSyncState } from '../state/sync-state.ts';
import { readSyncAnswer } from './fetch.ts';
import type { ContactReceipt } from './fetch-contacts.ts';
import type { CompanyAnswer, SyncRunRef } from './types.ts';

/**
 * A run that stopped before its commit (its workflow failed, was terminated, or its worker died for good) paid for
 * the answers it saved. The next run takes them into the state before it plans, so it asks those companies only
 * after what was bought, and commits that state under the stopped run's id. Its rows are not written: the next run's
 * `rows.csv` and `changes.csv` hold the night. Returns the stopped run's id, or undefined when there was none.
 */
export async function carryOnStoppedRun(store: Store, run: SyncRunRef, scratch: Scratch): Promise<string | undefined> {
  const stopped = await uncommittedSyncRun(store, run.name, run.runId);
  if (stopped === undefined) return undefined;
  const state = await openSyncState(store, scratch, run.name, run.at);
  try {
    const carried = await takeStoppedAnswers(store, run.name, stopped, state.db);
    if (carried === 0) return undefined;
    await commitSyncState(store, scratch, run.name, stopped, state.db);
    return stopped;
  } finally {
    state.db.close();
  }
}

/** Takes every answer the stopped run saved into `db`; returns how many answers there were. */
async function takeStoppedAnswers(store: Store, name: string, runId: string, db: StateDb): Promise<number> {
  let carried = 0;
  const take = (domain: string, company: CompanyAnswer, asOf: string) => {
    const merged = mergeAnswer(db.company(domain), company, asOf).state;
    if (merged) db.putCompany(domain, merged);
  };
  for await (const object of store.list(workPrefix({ name, runId }))) {
    // A contact's answer, saved as it came (a contacts night stopped inside a batch): taken in too, once by its ids.
    if (/answer-\d+-\d{3}\.json$/.test(object.key)) {
      const [receipt] = await readPartLines<ContactReceipt>(store, object.key);
      if (receipt?.as_of) take(receipt.key, receipt.answer, receipt.as_of);
      carried += receipt?.as_of ? 1 : 0;
      continue;
    }
    const index = /answer-(\d+)\.json$/.exec(object.key)?.[1];
    if (index === undefined || object.key !== answerKey({ name, runId }, Number(index))) continue;
    const answer = await readSyncAnswer(store, name, runId, Number(index));
    if (!answer) continue;
    carried += 1;
    db.transaction(() => {
      for (const [domain, company] of Object.entries(answer.domains)) take(domain, company, answer.as_of);
    });
  }
  return carried;
}
