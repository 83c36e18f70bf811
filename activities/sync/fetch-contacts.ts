import { KitError, NotFoundError } from '../../connectors/errors.ts';
import { publishSpooled } from '../paid/paid-batch.ts';
import { lostRace, type PaidAnswer, sendPaidCall } from '../paid/paid-call.ts';
import { optionsHash, readPart, readPartLines, writePart, zeroCounts } from '../run/parts.ts';
import { answerKey, callsPrefix } from '../run/scheduled-layout.ts';
import { companyOf, countsOf, keptSignals, publishAnswer, type SyncFetch } from './fetch.ts';
import { syncBatchKey, syncRunFolders } from './layout.ts';
import type { CompanyAnswer, SyncAnswer, SyncBatch, SyncBatchCompany, SyncBatchRequest } from './types.ts';

/** One contact's saved answer in a batch: the receipt a retry trusts, so a contact is paid once. */
export interface ContactReceipt {
  key: string;
  answer: CompanyAnswer;
  /** The run's scheduled time (a stopped night's receipts are taken in by the next night with it). */
  as_of: string;
  credits: number;
  calls: number;
  paid_calls: string[];
}

/**
 * Asks contact batch `index` of a contacts sync: one `POST /v1/contacts/enrich` per contact (the spec has no bulk
 * form), each asking only for the signals after the time the contact is complete through. Each contact's answer is
 * saved as it comes (`answer-<index>-<i>.json`, under its call's marker), so a retried batch pays for none again;
 * then the batch's answer (`answer-<index>.json`) is written from them, as a company batch writes its own.
 */
export const fetchSyncContacts: SyncFetch = async (client, store, request, attempt) => {
  const { run, index, filters } = request;
  await publishSpooled(store, syncRunFolders(run), attempt);
  const batchKey = answerKey(run, index);
  const [done] = (await store.exists(batchKey)) ? await readPartLines<SyncAnswer>(store, batchKey) : [];
  if (done) return { index, reused: true, failed: false, counts: countsOf(done) };

  const batch = JSON.parse(await store.readText(syncBatchKey(run, index))) as SyncBatch;
  const receipts: ContactReceipt[] = [];
  for (const [i, entry] of batch.domains.entries()) {
    const key = `${batchKey.slice(0, -'.json'.length)}-${String(i).padStart(3, '0')}.json`;
    const identity = { owner: `${run.name}/run-${run.runId}`, options: optionsHash({ filters, entry }), index };
    const seen = await readPart(store, key, identity);
    if (seen.part && !seen.part.failed) {
      receipts.push((await readPartLines<ContactReceipt>(store, key))[0]!);
      continue;
    }
    let receipt: ContactReceipt;
    let answered: PaidAnswer | undefined;
    try {
      const { response, marker } = await sendPaidCall(
        store,
        { callsPrefix: callsPrefix(run) },
        index,
        attempt,
        (call) => client.enrichContact(contactRequest(entry, filters), call),
      );
      answered = { marker, credits: response.credits };
      const company = companyOf(response.company);
      const signals = keptSignals(response.contact_signals, entry.start);
      const answer: CompanyAnswer = { status: 'ok', company, contact: { ...response.contact }, signals: signals.kept };
      receipt = { key: entry.domain, answer, as_of: run.at, credits: response.credits, calls: 1, paid_calls: [] };
    } catch (error) {
      if (!(error instanceof KitError) || !error.rule.perRecord) throw error;
      const answer: CompanyAnswer =
        error instanceof NotFoundError
          ? { status: 'not_found', signals: [] }
          : { status: 'error', signals: [], error: { code: 'request_rejected', message: error.message } };
      receipt = { key: entry.domain, answer, as_of: run.at, credits: 0, calls: 0, paid_calls: [] };
    }
    const published = await publishAnswer(store, key, seen, identity, answered, receipt, zeroCounts(), attempt.spool);
    if (published.lost) lostRace(key, store, undefined);
    receipts.push(receipt);
  }

  const answer: SyncAnswer = {
    index,
    as_of: run.at,
    credits: receipts.reduce((sum, r) => sum + r.credits, 0),
    calls: receipts.reduce((sum, r) => sum + r.calls, 0),
    overlap: { signals: 0, credits: 0 },
    domains: Object.fromEntries(receipts.map((r) => [r.key, r.answer])),
    paid_calls: receipts.flatMap((r) => r.paid_calls),
  };
  const counts = countsOf(answer);
  const identity = { owner: `${run.name}/run-${run.runId}`, options: optionsHash(filters), index };
  await writePart(store, 'none', batchKey, [answer], counts, 'done', answer.paid_calls ?? [], identity);
  return { index, reused: false, failed: false, counts };
};

function contactRequest(entry: SyncBatchCompany, filters: SyncBatchRequest['filters']) {
  const send = entry.contact!.send;
  return {
    ...(entry.contact!.role === 'email' ? { contact_email: send } : { contact_linkedin_url: send }),
    ...(entry.start ? { detected_after: entry.start } : {}),
    ...(filters.signal_types?.length ? { signal_types: filters.signal_types } : {}),
    limit: filters.limit,
  };
}
