/**
 * Promise: a CRM export goes in and every one of its records comes back under its own id. For an export shaped as
 * HubSpot writes it (Record ID, Company name, Website URL, LinkedIn Company Page), with repeated websites, rows named
 * only by company name or LinkedIn URL, a name that resolves to a company another row names by website, and junk:
 * every row's id appears exactly once; each row's company and signals are what the service holds for the company its
 * identifier resolves to; the account pays the spec's price for each distinct company once (plus any overlap the
 * manifest reports); one single call per distinct row without a domain, ceil(distinct domains / 100) bulk calls, and
 * never more than the rate limit allows. Checked against the sandbox's truth and its call record.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { ValidateFunction } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SANDBOX_EPOCH_MS } from '../../sandbox/index.ts';
import { removeTempDirs, tempDir } from '../../testkit/drill-input.ts';
import { type JobEnv, startJobEnv } from '../../testkit/job-env.ts';
import type { BulkEnrichInput } from '../../workflows/bulk-enrich.ts';
import { jsonSchemaValidator, shippedSchema } from '../helpers/json-schema.ts';
import { readJobOutput } from '../helpers/output.ts';
import { runJob } from './helpers.ts';
import { BULK_DOMAINS, callsTo, chargedSince, enrichIdeal, maxAcceptedInWindow, PATHS } from './oracle.ts';

const CLOCK = SANDBOX_EPOCH_MS + 150 * 86_400_000;
const LIMIT = 3;

interface CrmRow {
  id: string;
  name: string;
  website: string;
  linkedin: string;
}

/** The export: ids, websites in several spellings, repeats, rows with only a name or a LinkedIn URL, junk. */
function crmExport(): CrmRow[] {
  const rows: CrmRow[] = [];
  const row = (id: string, name: string, website = '', linkedin = '') => rows.push({ id, name, website, linkedin });
  for (let i = 0; i < 230; i++) row(`c${i}`, '', `crm-co${i}.com`);
  for (let i = 0; i < 30; i++) row(`r${i}`, '', [`https://www.crm-co${i}.com/about`, `CRM-CO${i}.COM`][i % 2]!);
  for (let i = 0; i < 15; i++) row(`n${i}`, `Name Only ${i} Inc`);
  for (let i = 0; i < 3; i++) row(`nr${i}`, `  name only ${i} inc `); // the same name again, other case and spaces
  for (let i = 0; i < 8; i++) row(`l${i}`, '', '', `https://www.linkedin.com/company/li-only-${i}/`);
  for (let i = 0; i < 2; i++) row(`w${i}`, '', `linkedin.com/company/li-only-${i}`); // a LinkedIn URL as website
  // Named only by name, yet the service resolves these to companies other rows name by website: paid once.
  for (let i = 0; i < 5; i++) row(`x${i}`, `crm co${100 + i}`);
  // And three whose companies are in the first bulk batch (rows 1-100).
  for (let i = 0; i < 3; i++) row(`y${i}`, `Crm Co${i}`);
  row('j0', '', 'not a website');
  row('j1', '', '');
  return rows;
}

const csvCell = (value: string) => (/[",\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value);

describe('CRM round trip against the truth', () => {
  let env: JobEnv;
  let dir: string;
  const rows = crmExport();

  let lineSchema: ValidateFunction;
  let manifestSchema: ValidateFunction;

  beforeAll(async () => {
    const ajv = jsonSchemaValidator();
    lineSchema = ajv.compile(await shippedSchema('enrich-line.schema.json'));
    manifestSchema = ajv.compile(await shippedSchema('manifest.schema.json'));
    env = await startJobEnv({ sandbox: { seed: 41, clock: () => CLOCK } });
    await env.startWorker();
    dir = await tempDir('promise-crm');
    const header = 'Record ID,Company name,Website URL,LinkedIn Company Page,Company owner';
    const lines = rows.map((r, i) => [r.id, r.name, r.website, r.linkedin, `owner${i % 3}`].map(csvCell).join(','));
    await writeFile(join(dir, 'hubspot.csv'), `${[header, ...lines].join('\r\n')}\r\n`);
  });
  afterAll(async () => {
    await env?.stop();
    await removeTempDirs();
  });

  it('every record once under its id, the truth for its company, each company paid once, the fewest calls', async () => {
    const { overlap } = await roundTrip('crm-round-trip', 16);
    expect(overlap.companies).toBe(0); // a small input is read whole before any call: nothing to pay twice
  });

  it('a first bulk batch sent while the input is still read: what it paid twice is reported as overlap, no more', async () => {
    // One batch in flight: the first bulk batch is sent before the rows named only by name are known.
    const { overlap, okCompanies } = await roundTrip('crm-round-trip-early', 1);
    const early = ['crm-co0.com', 'crm-co1.com', 'crm-co2.com'].filter((d) => okCompanies.has(d));
    expect(early.length).toBeGreaterThan(0);
    expect(overlap.companies).toBe(early.length);
  });

  async function roundTrip(jobId: string, concurrency: number) {
    const sandbox = env.sandbox;
    // What each row names, as the service resolves it: its website's domain, else its LinkedIn page's, else its name's.
    const resolved = new Map<string, string | null>();
    for (const r of rows) {
      if (r.id.startsWith('j')) continue;
      const li = r.linkedin || (r.website.includes('linkedin.com/company/') ? r.website : '');
      const domain = li
        ? sandbox.truth.companyDomainOf({ linkedin_url: li })
        : r.website
          ? r.website
              .toLowerCase()
              .replace(/^https?:\/\/(www\.)?/, '')
              .split('/')[0]!
          : sandbox.truth.companyDomainOf({ company_name: r.name });
      resolved.set(r.id, domain);
    }
    const companies = [...new Set([...resolved.values()].filter((d): d is string => d !== null))];
    const ideal = enrichIdeal(sandbox, companies, { limit: LIMIT });
    // Distinct identifiers without a domain: names compared without case or extra spaces, LinkedIn pages by slug.
    const singleIds = new Set(
      rows
        .filter(
          (r) =>
            !r.id.startsWith('j') &&
            !/^[a-z0-9.-]+\.[a-z]+(\/|$)/i.test(r.website.replace(/^https?:\/\/(www\.)?/i, '')),
        )
        .map((r) => r.linkedin || r.website || r.name.trim().replace(/\s+/g, ' ').toLowerCase())
        .map((v) => v.replace(/^https?:\/\/(www\.)?/, '').replace(/\/$/, '')),
    );
    const domainRows = rows.filter((r) => r.website && !r.website.includes('linkedin') && !r.id.startsWith('j'));
    const distinctDomains = new Set(domainRows.map((r) => resolved.get(r.id))).size;

    const output = pathToFileURL(join(dir, 'out')).href;
    const mark = sandbox.truth.lastCall();
    const result = await runJob<BulkEnrichInput>(env, 'bulkEnrich', {
      jobId,
      input: pathToFileURL(join(dir, 'hubspot.csv')).href,
      output,
      options: { limit: LIMIT },
      concurrency,
      keepColumns: ['company owner'],
    });
    expect(result.status).toBe('completed');
    const { manifest, lines } = await readJobOutput(output, jobId);
    for (const [i, line] of lines.entries())
      expect(lineSchema(line), `line ${i}: ${JSON.stringify(lineSchema.errors)}`).toBe(true);
    expect(manifestSchema(manifest), JSON.stringify(manifestSchema.errors)).toBe(true);

    // Every input row's id exactly once, with its kept column.
    expect(lines.map((l) => l['record_id']).sort()).toEqual(rows.map((r) => r.id).sort());
    for (const line of lines) expect(Object.keys(line['columns'] as object)).toEqual(['Company owner']);
    const byRow = new Map(lines.map((l) => [Number(l['row']), l]));

    for (const line of lines) {
      const id = String(line['record_id']);
      if (id.startsWith('j')) {
        expect(line['status'], id).toBe('invalid');
        continue;
      }
      const domain = resolved.get(id) ?? null;
      const truth = ideal.domains.find((d) => d.domain === domain);
      const want = domain === null || !truth || truth.status === 'not_found' ? 'not_found' : 'ok';
      const answer = line['status'] === 'duplicate' ? byRow.get(Number(line['duplicate_of'])) : line;
      expect(answer, `${id} points to an answering line`).toBeDefined();
      expect(answer?.['status'], id).toBe(want);
      if (line['status'] === 'duplicate') {
        expect(line['answer_status'], id).toBe(want);
        expect(line['signals'], id).toBeUndefined();
        expect(answer?.['status'], `${id} points to an answer, not to another duplicate`).not.toBe('duplicate');
      }
      if (want !== 'ok') continue;
      expect(line['domain'], id).toBe(domain);
      expect(answer, `${id} has an answer`).toBeDefined();
      expect((answer!['company'] as { domain?: string }).domain, id).toBe(domain);
      const ids = (answer!['signals'] as { signal_id: string }[]).map((s) => s.signal_id);
      expect(ids, id).toEqual(ideal.signalIds.get(domain!));
    }
    expect(lines.filter((l) => String(l['record_id']).startsWith('n'))[0]?.['matched_by']).toBe('company_name');
    expect(lines.find((l) => l['record_id'] === 'l0')?.['matched_by']).toBe('linkedin_url');
    expect(lines.find((l) => l['record_id'] === 'w1')?.['matched_by']).toBe('linkedin_url');

    // Each distinct company paid once at the spec's price, plus what the manifest itself reports as overlap.
    const overlap = (manifest['overlap'] as { credits: number; companies: number } | undefined) ?? {
      credits: 0,
      companies: 0,
    };
    expect(chargedSince(sandbox, mark)).toBe(ideal.credits + overlap.credits);
    expect(manifest.credits_charged).toBe(ideal.credits + overlap.credits);

    // One single call per distinct row without a domain; bulk calls for the distinct domains, 100 at a time.
    const singles = callsTo(sandbox, '/v1/companies/enrich', mark);
    expect(singles).toHaveLength(singleIds.size);
    const bulk = callsTo(sandbox, PATHS.enrichBulk, mark);
    expect(bulk.length).toBeLessThanOrEqual(Math.ceil(distinctDomains / BULK_DOMAINS) + 1);
    expect(manifest['calls']).toEqual({ bulk: bulk.length, single: singles.length });
    expect(maxAcceptedInWindow(sandbox.truth.calls({ after: mark }), 60_000)).toBeLessThanOrEqual(300);
    const okCompanies = new Set(ideal.domains.filter((d) => d.status === 'ok').map((d) => d.domain));
    return { overlap, okCompanies };
  }
});
