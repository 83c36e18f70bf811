/**
 * Promise: `signal-kit enrich-contacts` answers every row of a CRM contact export once, by its record id, with one
 * paced call per distinct contact, and pays what the sandbox's pricing documents (2 credits per person-level signal
 * returned, nothing for a contact it does not know), checked against the sandbox's truth and call record; and a
 * worker killed mid-run loses nothing and pays again at most for the calls it had in flight.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../testkit/cli-process.ts';
import { removeTempDirs, tempDir } from '../../testkit/drill-input.ts';
import { type JobEnv, startJobEnv } from '../../testkit/job-env.ts';
import { CONTACT_STREAMS } from '../../workflows/enrich-contacts.ts';
import { childWorkers, killWorkerWhilePaid, settledPaidCalls } from '../helpers/child-workers.ts';
import { jsonSchemaValidator, shippedSchema } from '../helpers/json-schema.ts';
import { readJobOutput } from '../helpers/output.ts';
import { callsTo, chargedSince } from './oracle.ts';

const CONTACTS = '/v1/contacts/enrich';
const LIMIT = 4;

/** A HubSpot contacts export (its documented column labels), with the mess a real one has. */
interface Export {
  csv: string;
  /** Record id → the value the job should send (lower-cased email, or the LinkedIn URL), or null: invalid row. */
  rows: Map<string, string | null>;
  /** Distinct values sent, in first-row order. */
  distinct: string[];
}

function hubspotExport(env: JobEnv, size: number, prefix: string): Export {
  const people = env.sandbox.truth
    .intentContacts({ topic_ids: ['b2b_901', 'b2b_902', 'b2b_903'] })
    .map((item) => item.contact)
    .filter((c, i, all) => c.email && all.findIndex((o) => o.email === c.email) === i)
    .slice(0, size);
  const lines = ['Record ID,First Name,Last Name,Email,LinkedIn URL,Lifecycle Stage'];
  const rows = new Map<string, string | null>();
  const distinct: string[] = [];
  let id = 1000;
  const add = (first: string, last: string, email: string, linkedin: string, send: string | null) => {
    const recordId = `${prefix}${id++}`;
    lines.push([recordId, first, last, email, linkedin, 'lead'].map((v) => (v.includes(',') ? `"${v}"` : v)).join(','));
    rows.set(recordId, send);
    if (send !== null && !distinct.includes(send)) distinct.push(send);
  };
  people.forEach((person, i) => {
    // Every fifth person has only a LinkedIn URL (no email in the CRM).
    if (i % 5 === 4 && person.linkedin_url)
      add(person.first_name, person.last_name, '', person.linkedin_url, person.linkedin_url);
    else add(person.first_name, person.last_name, person.email!, '', person.email!.toLowerCase());
  });
  // The same people entered twice (another case, spaces): duplicates, answered from the first row, never paid.
  for (const person of people.slice(0, 3))
    add(person.first_name, person.last_name, `  ${person.email!.toUpperCase()} `, '', person.email!.toLowerCase());
  // Addresses the service does not know (free mail, role addresses): called, answered not_found, free.
  add('Pat', 'Doe', 'pat.doe.1970@gmail.com', '', 'pat.doe.1970@gmail.com');
  add('Info', 'Desk', `info@${people[0]!.email!.split('@')[1]}`, '', `info@${people[0]!.email!.split('@')[1]}`);
  // Rows with nothing usable: invalid lines, never sent.
  add('No', 'Contact', '', '', null);
  add('Bad', 'Address', 'not-an-address', '', null);
  return { csv: `${lines.join('\n')}\n`, rows, distinct };
}

describe('promise: enrich-contacts', () => {
  let env: JobEnv;

  beforeAll(async () => {
    env = await startJobEnv({ sandbox: { seed: 43 } });
  });
  afterAll(async () => {
    await env?.stop();
    await removeTempDirs();
  });

  const worker = childWorkers(() => env);

  /** What the job should have paid and answered, from the sandbox's truth (at the end of the job). */
  function ideal(input: Export) {
    const truths = env.sandbox.truth.contactSignals(input.distinct);
    const credits = truths.reduce((sum, t) => sum + 2 * Math.min(LIMIT, t.signals.length), 0);
    return { truths: new Map(truths.map((t) => [t.input, t])), credits };
  }

  const lineSchema = (async () =>
    jsonSchemaValidator().compile(await shippedSchema('enrich-contacts-line.schema.json')))();

  /** Every row once by record id; each answer as the truth has it; duplicates point at their first row. */
  /** A HubSpot export of `size` contacts in a new temp dir, where its job writes, and the `enrich-contacts` arguments. */
  async function contactsExport(dirName: string, size: number, prefix: string) {
    const dir = await tempDir(dirName);
    const input = hubspotExport(env, size, prefix);
    await writeFile(join(dir, 'contacts.csv'), input.csv);
    const output = pathToFileURL(join(dir, 'out')).href;
    const args = [
      'enrich-contacts',
      '--input',
      join(dir, 'contacts.csv'),
      '--output',
      output,
      '--limit',
      String(LIMIT),
    ];
    return { input, output, args };
  }

  async function checkLines(
    input: Export,
    lines: Record<string, unknown>[],
    truths: ReturnType<typeof ideal>['truths'],
  ) {
    const valid = await lineSchema;
    for (const line of lines)
      if (!valid(line)) expect.fail(`${JSON.stringify(line).slice(0, 300)}: ${JSON.stringify(valid.errors)}`);
    expect(lines).toHaveLength(input.rows.size);
    expect(lines.map((l) => l['record_id']).sort()).toEqual([...input.rows.keys()].sort());
    const firstRowOf = new Map<string, number>();
    for (const line of [...lines].sort((a, b) => Number(a['row']) - Number(b['row']))) {
      const sent = input.rows.get(String(line['record_id']));
      if (sent === null) {
        expect(line['status']).toBe('invalid');
        continue;
      }
      const truth = truths.get(sent!)!;
      if (firstRowOf.has(sent!)) {
        expect(line).toMatchObject({ status: 'duplicate', duplicate_of: firstRowOf.get(sent!) });
        expect(line).not.toHaveProperty('signals');
        continue;
      }
      firstRowOf.set(sent!, Number(line['row']));
      expect(line['matched_by']).toBe(sent!.includes('linkedin.com') ? 'linkedin_url' : 'email');
      expect(line['status'], sent).toBe(truth.status === 'ok' ? 'ok' : 'not_found');
      if (truth.status !== 'ok') continue;
      expect((line['company'] as { domain: string }).domain).toBe(truth.domain);
      expect(line['domain']).toBe(truth.domain);
      expect((line['contact'] as { first_name?: string }).first_name).toBeTruthy();
      const ids = (line['signals'] as { signal_id: string }[]).map((s) => s.signal_id);
      expect(ids).toEqual(truth.signals.slice(0, LIMIT).map((s) => s.signal_id));
    }
  }

  it('answers every row once by its record id, with one call per distinct contact, at the documented price', async () => {
    const { input, output, args } = await contactsExport('contacts-promise', 40, 'c');

    const dry = await runCli([...args, '--dry-run'], env.childEnv(), 60_000);
    expect(dry.code, dry.stderr).toBe(0);
    const report = JSON.parse(dry.stdout) as {
      calls: number;
      credits: { worstCase: number };
      callsByKind: { minutesAtRateLimit: number };
    };
    expect(report.calls).toBe(input.distinct.length);
    expect(report.credits.worstCase).toBe(input.distinct.length * LIMIT * 2);

    const mark = env.sandbox.truth.lastCall();
    await worker();
    const done = await runCli(
      [...args, '--job-id', 'contacts-once', '--format', 'csv', '--wait'],
      env.childEnv(),
      180_000,
    );
    expect(done.code, done.stderr).toBe(0);
    const { manifest, lines } = await readJobOutput(output, 'contacts-once');
    const { truths, credits } = ideal(input);
    await checkLines(input, lines, truths);
    const notFound = [...truths.values()].filter((t) => t.status === 'not_found');
    expect(notFound.length).toBeGreaterThanOrEqual(2);
    // One call per distinct valid contact, none for duplicates or invalid rows; the price from the sandbox's rules.
    expect(callsTo(env.sandbox, CONTACTS, mark)).toHaveLength(input.distinct.length);
    expect(chargedSince(env.sandbox, mark)).toBe(credits);
    expect(manifest.credits_charged).toBe(credits);
    expect(manifest.kind).toBe('enrich-contacts');
    expect(manifest.counts.distinct).toBe(input.distinct.length);
    // --format csv: the rows table (one row per input row) beside the lines, as for accounts.
    const rowsParts = manifest.parts.filter((part) => part.table === 'rows' && part.format === 'csv');
    expect(rowsParts.reduce((sum, part) => sum + part.lines, 0)).toBe(input.rows.size - 2);

    // Run again: the finished job returns its manifest without calling the service.
    const again = await runCli([...args, '--job-id', 'contacts-once', '--wait'], env.childEnv(), 60_000);
    expect(again.code, again.stderr).toBe(0);
    expect(callsTo(env.sandbox, CONTACTS, mark)).toHaveLength(input.distinct.length);
  });

  it('a worker killed while paid answers are on their way loses no row and pays again at most for calls in flight', async () => {
    const { input, output, args } = await contactsExport('contacts-crash', 60, 'k');
    const mark = env.sandbox.truth.lastCall();
    const { done, ledger0 } = await killWorkerWhilePaid(env, worker, {
      args: [...args, '--job-id', 'contacts-crash', '--wait'],
      path: CONTACTS,
      holdMs: 6_000,
      timeoutMs: 240_000,
      clearFaults: true,
    });
    expect(done.code, done.stderr).toBe(0);

    const { manifest, lines } = await readJobOutput(output, 'contacts-crash');
    const { truths, credits } = ideal(input);
    await checkLines(input, lines, truths);
    const { calls, undelivered, lost } = await settledPaidCalls(env.sandbox, CONTACTS, mark, ledger0);
    // Saved answers cost exactly the documented price. The only extra is the calls the dead worker had in flight,
    // at most one per call stream (a batch sends its contacts one after another); the manifest accounts for them.
    expect(manifest.credits_charged).toBe(credits);
    const repeated = calls.length - input.distinct.length;
    expect(repeated).toBeGreaterThanOrEqual(undelivered.length);
    expect(repeated).toBeLessThanOrEqual(CONTACT_STREAMS);
    const extra = chargedSince(env.sandbox, mark) - credits;
    expect(extra).toBeGreaterThanOrEqual(lost);
    expect(extra).toBeLessThanOrEqual(repeated * LIMIT * 2);
    const unsaved = manifest.unsaved_answers!;
    expect(unsaved.unknown_calls).toBeGreaterThanOrEqual(undelivered.length);
    expect(extra).toBeGreaterThanOrEqual(unsaved.credits);
    expect(extra).toBeLessThanOrEqual(unsaved.credits + unsaved.unknown_calls * LIMIT * 2);
  });
});
