/**
 * What `--format parquet` costs a bulk enrichment: the CPU of writing a batch's lines as the flat tables in Parquet
 * (rows and signals, flattening included) against writing the same lines as today's gzip JSONL part, on real bulk
 * answers from the sandbox (100 domains each, the service's default number of signals per domain).
 *
 * A = `encodeJobTables` with `parquet`: the rows and signals tables of the lines, flattening included (what an enrich
 * batch adds with `--format parquet`). Two baselines on the same lines, in the same rounds: B = the same tables as
 * gzip JSONL (`--format jsonl`), and L = `encodePart('gzip')`, the nested lines part every batch writes anyway. All
 * run in this process, in alternating order each round over every answer; CPU is `process.cpuUsage()` (user +
 * system; zlib and zstd run on this thread). The medians of the per-round ratios A/B and A/L are reported; the goal
 * (issue 20, "the same lines") is A/L at most 1.2. CSV tables and the flattening alone (F: lines into table rows, part
 * of A and B) are measured in the same rounds, for reference.
 *
 *   node bench/run.ts parquet-cost [--size smoke]
 */
import { encodeJobTables, jobTableRows } from '../activities/jobs/tables.ts';
import type { JobRef } from '../activities/jobs/types.ts';
import { encodePart } from '../activities/run/parts.ts';
import type { OutputFormat } from '../activities/tables/encode.ts';
import { bulkAnswerTexts } from './lib/sandbox-answers.ts';
import { median } from './lib/stats.ts';
import type { Benchmark, BenchResult, RunOptions, Size } from './lib/types.ts';

export const SIZES = {
  full: { answers: 12, rounds: 15 },
  smoke: { answers: 2, rounds: 3 },
} as const;

type Line = Record<string, unknown>;

/** Lines as an enrich batch writes them: one per domain, its answer's fields after the kit's own. */
async function fetchLines(answers: number): Promise<Line[][]> {
  const texts = await bulkAnswerTexts(answers, 'parquet');
  return texts.map((text, a) =>
    (JSON.parse(text) as { results: Line[] }).results.map((result, i) => {
      const { domain, status, ...rest } = result;
      return { domain, status, row: a * 100 + i + 1, record_id: `r${a}-${i}`, input: domain, ...rest };
    }),
  );
}

const job = (formats: OutputFormat[]): JobRef => ({
  jobId: 'bench',
  kind: 'enrich',
  output: 'file:///unused',
  compression: 'gzip',
  formats,
});

interface Side {
  name: string;
  encode: (lines: Line[], index: number) => number;
}

function tablesSide(format: OutputFormat): Side {
  const ref = job([format]);
  return {
    name: format,
    encode: (lines, index) =>
      encodeJobTables(ref, `bench/parts/part-${String(index).padStart(5, '0')}.jsonl.gz`, lines).reduce(
        (bytes, part) => bytes + part.body.length,
        0,
      ),
  };
}

const baseline: Side = { name: 'gzip jsonl (lines part)', encode: (lines) => encodePart('gzip', lines).length };

/** The flattening alone: the table rows A and B encode (its "bytes" are the rows made). */
const flattening: Side = {
  name: 'flatten',
  encode: (lines) => jobTableRows(job(['parquet']), lines, false).reduce((n, table) => n + table.rows.length, 0),
};

/** CPU milliseconds and output bytes of one side over every batch. */
function measure(side: Side, batches: Line[][]): { cpuMs: number; bytes: number } {
  const start = process.cpuUsage();
  let bytes = 0;
  batches.forEach((lines, index) => {
    bytes += side.encode(lines, index);
  });
  const used = process.cpuUsage(start);
  return { cpuMs: (used.user + used.system) / 1000, bytes };
}

export async function run(size: Size, options: RunOptions = {}): Promise<BenchResult> {
  const log = options.log ?? ((line: string) => console.error(line));
  const startedAt = new Date();
  const { answers, rounds } = SIZES[size];
  log(`parquet-cost: fetching ${answers} bulk answers of 100 domains from the sandbox`);
  const batches = await fetchLines(answers);
  const lines = batches.reduce((n, b) => n + b.length, 0);
  const signals = batches.reduce(
    (n, b) => n + b.reduce((m, line) => m + ((line['signals'] as unknown[] | undefined)?.length ?? 0), 0),
    0,
  );
  const sides = [tablesSide('parquet'), tablesSide('csv'), tablesSide('jsonl'), flattening];
  // One uncounted round of each over every answer, so that no side pays the JIT's compilations in a counted round
  // (a warm-up on one answer left the first counted rounds of A at 1.4–1.8× L, the later ones at 0.9–1.1×).
  for (const side of [baseline, ...sides]) measure(side, batches);
  const samples = new Map<string, { cpuMs: number; bytes: number }[]>();
  for (const side of [baseline, ...sides]) samples.set(side.name, []);
  const ratios = new Map<string, number[]>(sides.map((side) => [side.name, []]));
  const toJsonlTables: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? [baseline, ...sides] : [...sides].reverse().concat(baseline);
    const measured = new Map<string, { cpuMs: number; bytes: number }>();
    for (const side of order) {
      const m = measure(side, batches);
      measured.set(side.name, m);
      samples.get(side.name)?.push(m);
    }
    const base = measured.get(baseline.name)?.cpuMs ?? Number.NaN;
    for (const side of sides) ratios.get(side.name)?.push((measured.get(side.name)?.cpuMs ?? Number.NaN) / base);
    toJsonlTables.push((measured.get('parquet')?.cpuMs ?? Number.NaN) / (measured.get('jsonl')?.cpuMs ?? Number.NaN));
    log(
      `  round ${round + 1}/${rounds}: parquet/jsonl tables ${(toJsonlTables.at(-1) ?? 0).toFixed(2)}, ` +
        `parquet/lines part ${((ratios.get('parquet') ?? []).at(-1) ?? 0).toFixed(2)}`,
    );
  }
  const med = (name: string, pick: (s: { cpuMs: number; bytes: number }) => number) =>
    median((samples.get(name) ?? []).map(pick));
  const jsonlTables = (name: string) =>
    name === 'jsonl' ? 1 : name === 'parquet' ? Number(median(toJsonlTables).toFixed(2)) : '';
  const row = (name: string, label: string) => [
    label,
    Number(med(name, (s) => s.cpuMs).toFixed(1)),
    Number(((lines / med(name, (s) => s.cpuMs)) * 1000).toFixed(0)),
    name === flattening.name ? '' : Number((med(name, (s) => s.bytes) / 1024).toFixed(0)),
    jsonlTables(name),
    name === baseline.name ? 1 : Number(median(ratios.get(name) ?? []).toFixed(2)),
  ];
  const parquetRatio = median(toJsonlTables);
  const parquetToLines = median(ratios.get('parquet') ?? []);
  return {
    name: 'parquet-cost',
    size,
    title: `CPU of writing ${lines} enrich lines (${signals} signals, ${answers} bulk answers) as Parquet tables vs gzip JSONL (the same tables, and the lines part), median of ${rounds} alternating rounds`,
    startedAt: startedAt.toISOString(),
    durationS: (Date.now() - startedAt.getTime()) / 1000,
    table: {
      columns: [
        'writer',
        'CPU ms (median)',
        'lines/s of CPU',
        'KiB out',
        'CPU ratio to B (median)',
        'CPU ratio to L (median)',
      ],
      rows: [
        row('parquet', 'A: rows + signals tables, Parquet'),
        row('jsonl', 'B: rows + signals tables, gzip JSONL'),
        row(baseline.name, 'L: nested lines part, gzip JSONL'),
        row('csv', 'rows + signals tables, CSV'),
        row(flattening.name, 'F: flattening alone (in A and B)'),
      ],
    },
    metrics: {
      lines,
      signals,
      rounds,
      parquetRatio,
      parquetToLines,
      toJsonlTables,
      ratios: Object.fromEntries(ratios),
      samples: Object.fromEntries(samples),
    },
    checks: {
      everyRoundMeasured: [...ratios.values()].every((r) => r.length === rounds && r.every(Number.isFinite)),
      tablesWritten: [...samples.values()].every((s) => s.every((m) => m.bytes > 0)),
    },
    notes: [
      `Goal (issue 20): Parquet at most 1.2x the CPU of gzip JSONL for the same lines. Same tables (A/B): ${parquetRatio.toFixed(2)}. Against the nested lines part (A/L): ${parquetToLines.toFixed(2)}.`,
      `A and B both include turning nested lines into the flat rows and signals tables (F, ${((100 * med(flattening.name, (s) => s.cpuMs)) / med('parquet', (s) => s.cpuMs)).toFixed(0)} % of A); L is the part every batch writes anyway, so --format parquet adds A to it.`,
    ],
  };
}

export const benchmark: Benchmark = {
  name: 'parquet-cost',
  description: 'CPU of writing a batch as Parquet tables vs the gzip JSONL lines part, same lines, alternating rounds',
  run,
};
