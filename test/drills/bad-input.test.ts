/**
 * Bad input drills (issue 6): `signal-kit enrich --input … --output … --wait` in a child process, with a worker
 * (`signal-kit worker`, also a child process) running, against inputs and settings a user gets wrong. Each case
 * ends one of two ways, decided per case:
 *  - the whole job cannot go on (the file cannot be read past a point, there is nothing to do, the input or the
 *    bucket is missing, the key is refused, the balance is spent): a non-zero exit and a message naming the problem
 *    and, where there is one, the line;
 *  - only a row is bad (a non-JSON line, an over-long JSONL line): an `invalid` record
 *    naming the row and the reason, the other rows enriched, exit 0.
 * Nothing already written is lost or corrupted: parts published before a failure stay intact and manifested, and a
 * re-run after the fix pays only for what was not done.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobResult, Manifest } from '../../activities/jobs/types.ts';
import { openStore } from '../../config/storage.ts';
import { DEFAULT_ACCOUNT_ID, DEFAULT_KEYS, SANDBOX_EPOCH_MS } from '../../sandbox/index.ts';
import { type ChildWorker, type CliResult, runCli, startChildWorker } from '../../testkit/cli-process.ts';
import { removeTempDirs, tempDir, writeDomainsCsv } from '../../testkit/drill-input.ts';
import { type JobEnv, startJobEnv } from '../../testkit/job-env.ts';
import { checkJobOutput, readCheckedParts } from '../../testkit/job-output.ts';
import { readJobOutput } from '../helpers/output.ts';
import { answeredDomains, enrichTruthCredits } from '../helpers/truth-checks.ts';
import { callsTo, enrichIdeal, PATHS } from '../promises/oracle.ts';

const CLOCK = SANDBOX_EPOCH_MS + 30 * 86_400_000;
const POOR_KEY = 'sk_poor_1';
const POOR_CREDITS = 2_000;

describe('drill: bad inputs and settings through the CLI', () => {
  let env: JobEnv;
  let dir: string;
  let out: string;
  let worker: ChildWorker | undefined;
  const extraWorkers: ChildWorker[] = [];

  beforeAll(async () => {
    env = await startJobEnv({
      s3: true,
      sandbox: {
        seed: 23,
        clock: () => CLOCK,
        accounts: [
          { id: DEFAULT_ACCOUNT_ID, keys: [...DEFAULT_KEYS], credits: 10_000_000 },
          { id: 'acct_poor', keys: [POOR_KEY], credits: POOR_CREDITS },
        ],
      },
    });
    await env.createBuckets('drills');
    worker = await startChildWorker(env.childEnv());
    dir = await tempDir('bad-input');
    out = pathToFileURL(join(dir, 'out')).href;
  });
  afterAll(async () => {
    await Promise.allSettled([worker, ...extraWorkers].map((w) => w?.kill()));
    await env?.stop();
    await removeTempDirs();
  });

  const enrich = (
    input: string,
    jobId: string,
    options: { output?: string; args?: string[]; env?: Record<string, string> } = {},
  ) =>
    runCli(
      [
        'enrich',
        '--input',
        input,
        '--output',
        options.output ?? out,
        '--job-id',
        jobId,
        '--wait',
        ...(options.args ?? []),
      ],
      env.childEnv(options.env),
      60_000,
    );
  const file = async (name: string, content: string | Buffer) => {
    await writeFile(join(dir, name), content);
    return pathToFileURL(join(dir, name)).href;
  };
  /** The job's one-line failure, as the user reads it (progress lines are JSON). */
  const failure = (result: CliResult) =>
    result.stderr
      .split('\n')
      .filter((line) => line.startsWith('signal-kit'))
      .join('\n');
  const expectFailure = (result: CliResult, message: RegExp) => {
    expect(result.timedOut, 'the command hung').toBe(false);
    expect(result.code, result.stderr).toBe(1);
    expect(failure(result)).toMatch(message);
    console.log(`bad-input: exit ${result.code}: ${failure(result)}`);
  };
  const expectDone = (result: CliResult) => {
    expect(result.timedOut, 'the command hung').toBe(false);
    expect(result.code, result.stderr).toBe(0);
    return JSON.parse(result.stdout) as JobResult;
  };
  /** The job enriched alpha-one.com and gamma-three.com and made row 2 its one invalid record, returned. */
  const expectRow2Invalid = async (result: CliResult, jobId: string) => {
    const job = expectDone(result);
    expect(job.counts).toMatchObject({ input_rows: 3, distinct: 2, invalid: 1 });
    const { lines } = await checkJobOutput(out, jobId, {
      distinct: new Set(['alpha-one.com', 'gamma-three.com']),
      invalidRows: [2],
    });
    return lines.find((line) => line['status'] === 'invalid')!;
  };

  it('a CSV with an unclosed quote: exit 1, the message names the line the quote opens on', async () => {
    const rows = ['id,website', '1,alpha-one.com', '2,"beta-two.com', '3,gamma-three.com', '4,delta-four.com'];
    const input = await file('broken-quote.csv', `${rows.join('\n')}\n`);
    const result = await enrich(input, 'bad-quote');
    expectFailure(result, /line 3\b.*quote.*never closed/);
  });

  it('a CSV whose quote breaks after the first window of batches: exit 1 naming the line; the batches that ran are kept', async () => {
    // The job starts on its first 16 batches while the rest of the file is read; the file then cannot be read on.
    const rows = ['id,website'];
    for (let i = 1; i <= 2_000; i++) rows.push(`${i},company-${i}.example.com`);
    rows.push('2001,"broken.example.com', '2002,after.example.com');
    const input = await file('late-broken-quote.csv', `${rows.join('\n')}\n`);
    const mark = env.sandbox.truth.lastCall();
    const result = await enrich(input, 'late-bad-quote');
    expectFailure(result, /line 2002\b.*quote.*never closed/);
    const { manifest, lines, problems } = await readCheckedParts(out, 'late-bad-quote');
    expect(problems).toEqual([]);
    expect(manifest.status).toBe('failed');
    // What the sandbox answered (and charged) for this job, from its call record: at least the first batch ran.
    const answered = callsTo(env.sandbox, PATHS.enrichBulk, mark).filter((call) => call.status === 200);
    const paid = new Set(answered.flatMap((call) => (call.asked?.['domains'] as string[] | undefined) ?? []));
    expect(paid.size).toBeGreaterThanOrEqual(100);
    // What was paid for is manifested, once per domain, and only domains from before the break; a paid answer
    // missing from the output is named in the manifest as unsaved.
    const domains = lines.map((line) => String(line['domain']));
    expect(new Set(domains).size).toBe(domains.length);
    expect(domains.every((domain) => /^company-\d+\.example\.com$/.test(domain))).toBe(true);
    expect(domains.filter((domain) => !paid.has(domain))).toEqual([]);
    const unsaved = manifest.unsaved_answers ?? { credits: 0, unknown_calls: 0 };
    if (unsaved.credits === 0 && unsaved.unknown_calls === 0) expect(domains.length).toBe(paid.size);
    else expect(domains.length).toBeGreaterThan(0);
  });

  it('a CSV with a 10 MiB line: exit 1, the message names the line and the size limit', async () => {
    const huge = `https://${'x'.repeat(10 * 2 ** 20)}.com`;
    const input = await file('huge-line.csv', `id,website\n1,alpha-one.com\n2,${huge}\n3,gamma-three.com\n`);
    const result = await enrich(input, 'bad-huge-csv');
    expectFailure(result, /line 3\b.*size limit/);
  });

  it('a JSONL file with a 10 MiB line: that row is an invalid record (raw value cut short), the rest enriched', async () => {
    const huge = 'x'.repeat(10 * 2 ** 20);
    const input = await file(
      'huge-line.jsonl',
      `{"domain":"alpha-one.com"}\n{"domain":"${huge}.com"}\n{"domain":"gamma-three.com"}\n`,
    );
    const invalid = await expectRow2Invalid(await enrich(input, 'bad-huge-jsonl'), 'bad-huge-jsonl');
    expect(invalid['error']).toMatch(/253/);
    expect(String(invalid['raw']).length).toBeLessThan(2_000);
  });

  it('a byte that is not UTF-8 after plain ASCII: the file is Windows-1252, every row read with its accent', async () => {
    const input = await file(
      'latin1.csv',
      Buffer.concat([
        Buffer.from('id,website\n1,alpha-one.com\n2,caf'),
        Buffer.from([0xe9]), // "é" in Windows-1252: not UTF-8
        Buffer.from('-paris.fr\n3,gamma-three.com\n'),
      ]),
    );
    const job = expectDone(await enrich(input, 'bad-utf8'));
    expect(job.counts.input_rows).toBe(3);
    const { lines } = await readJobOutput(out, 'bad-utf8');
    const row2 = lines.find((line) => line['row'] === 2);
    expect(row2?.['input']).toBe('café-paris.fr');
  });

  it('UTF-8 text, then a byte that is not, deep in a local file: exit 2 before anything starts, naming row and byte', async () => {
    const rows = Array.from({ length: 4_000 }, (_, i) => `${i},row-${i}-é.example`); // UTF-8 accents: 80 KB
    const input = await file(
      'mixed-late.csv',
      Buffer.concat([Buffer.from(`id,website\n${rows.join('\n')}\n`), Buffer.from([0x39, 0x39, 0x2c, 0xe9, 0x0a])]),
    );
    const mark = env.sandbox.truth.lastCall();
    const result = await enrich(input, 'bad-mixed');
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toMatch(/row 4001 \(line 4002\), byte \d+ is UTF-8 up to a byte that is not/);
    expect(env.sandbox.truth.calls({ after: mark })).toEqual([]);
  });

  it('an empty file: exit 1, the message says there are no rows', async () => {
    expectFailure(await enrich(await file('empty.csv', ''), 'bad-empty'), /empty\.csv has no data rows/);
    expectFailure(await enrich(await file('header-only.csv', 'id,website\n'), 'bad-header'), /no data rows/);
  });

  it('a JSONL file with a non-JSON line: that line is an invalid record naming it, the rest enriched', async () => {
    const input = await file(
      'mixed.jsonl',
      '{"domain":"alpha-one.com"}\n{"domain": "beta-two.com",\n\n{"website":"gamma-three.com"}\n',
    );
    const invalid = await expectRow2Invalid(await enrich(input, 'bad-jsonl'), 'bad-jsonl');
    expect(invalid['row']).toBe(2);
    expect(invalid['error']).toMatch(/not valid JSON/);
  });

  it('an input URL that does not exist: exit 2 before anything starts (the command can read the bucket), else exit 1 from the job; the message names it', async () => {
    const missing = await enrich('s3://drills/nowhere/crm.csv', 'bad-missing-input');
    expect(missing.code, missing.stderr).toBe(2);
    expect(missing.stderr).toMatch(/s3:\/\/drills\/nowhere\/crm\.csv does not exist/);
    expectFailure(
      await enrich('s3://no-such-bucket/crm.csv', 'bad-missing-input-bucket'),
      /bucket "no-such-bucket" does not exist/,
    );
  });

  it('an output bucket that does not exist: exit 1, the message names the bucket', async () => {
    const input = await file('ok.csv', 'website\nalpha-one.com\n');
    const result = await enrich(input, 'bad-output', { output: 's3://missing-bucket/x' });
    expectFailure(result, /bucket "missing-bucket" does not exist/);
  });

  it('a wrong API key in the worker: exit 1, the service refusal named; nothing charged', async () => {
    const queues = { SIGNAL_KIT_TASK_QUEUE: 'bad-key-main', SIGNAL_KIT_API_TASK_QUEUE: 'bad-key-api' };
    const badWorker = await startChildWorker(env.childEnv({ ...queues, SIGNAL_API_KEY: 'sk_wrong_key' }));
    extraWorkers.push(badWorker);
    try {
      const input = await file('key.csv', 'website\nalpha-one.com\nbeta-two.com\n');
      const before = env.sandbox.ledger.total();
      const result = await enrich(input, 'bad-key', { env: queues });
      expectFailure(result, /401.*(unknown API key|Unauthorized)/i);
      expect(env.sandbox.ledger.total()).toBe(before);
      const manifest = JSON.parse(await openStore(out).readText('bad-key/_manifest.json')) as Manifest;
      expect(manifest).toMatchObject({ status: 'failed', error: expect.stringMatching(/401/) });
    } finally {
      await badWorker.stop();
    }
  });

  it('a spent credit balance: exit 1 naming it; the parts done stay intact; topped up, the re-run pays only the rest', async () => {
    // Three rows with a junk website and a company name: answered one call each by name, beside the bulk calls.
    const input = await writeDomainsCsv(dir, 'spend.csv', { distinct: 1_500, seed: 91, junk: 3, names: true });
    const domains = answeredDomains(env.sandbox, input);
    expect(domains.size).toBe(input.distinct.size + 3);
    // What the whole job costs: the spec's price of the signals that exist for its domains (the sandbox's truth).
    const fullCost = enrichIdeal(env.sandbox, [...domains], { limit: 2 }).credits;
    expect(fullCost).toBeGreaterThan(POOR_CREDITS);

    const queues = { SIGNAL_KIT_TASK_QUEUE: 'poor-main', SIGNAL_KIT_API_TASK_QUEUE: 'poor-api' };
    const poorWorker = await startChildWorker(env.childEnv({ ...queues, SIGNAL_API_KEY: POOR_KEY }));
    extraWorkers.push(poorWorker);
    try {
      const before = env.sandbox.ledger.total('acct_poor');
      const spent = await enrich(input.url, 'spend', { args: ['--limit', '2'], env: queues });
      expectFailure(spent, /402.*credit/i);
      const charged = env.sandbox.ledger.total('acct_poor') - before;
      expect(charged).toBeGreaterThan(0);
      expect(charged).toBeLessThanOrEqual(POOR_CREDITS);
      // What was written before the balance ran out is manifested, intact, and counted in the manifest's credits.
      const partial = await readCheckedParts(out, 'spend');
      expect(partial.manifest.status).toBe('failed');
      expect(partial.manifest.credits_charged).toBe(charged);
      const done = partial.lines
        .filter((line) => !['invalid', 'duplicate'].includes(String(line['status'])))
        .map((line) => String(line['domain']));
      expect(done.length).toBeGreaterThan(0);
      expect(new Set(done).size).toBe(done.length);

      env.sandbox.accounts.addCredits('acct_poor', 1_000_000);
      const resumed = expectDone(await enrich(input.url, 'spend', { args: ['--limit', '2'], env: queues }));
      expect(resumed.status).toBe('completed');
      expect(env.sandbox.ledger.total('acct_poor') - before).toBe(fullCost);
      const { lines } = await checkJobOutput(out, 'spend', { distinct: domains, invalidRows: [] });
      expect(enrichTruthCredits(env.sandbox, input, lines, 2)).toBe(fullCost);
    } finally {
      await poorWorker.stop();
    }
  });
});
