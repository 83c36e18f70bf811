/**
 * The hottest per-call path of bulk enrichment on its own: one `POST /v1/companies/enrich/bulk` answer for 100
 * domains (about 1.8 MB of JSON from the sandbox) turned into the kit's normalized result.
 *
 * A = `JSON.parse` + `parseBulkEnrichAnswer` (tolerant parse and normalization), B (baseline) = `JSON.parse` alone,
 * on the same answers, alternating A and B each round; the median of the per-round ratios is printed. With
 * `--compare <module>`, a second implementation exporting `parseBulkEnrichAnswer` runs in the same rounds (A′),
 * which is how a change to the hot path is measured before/after on one machine.
 *
 *   node bench/micro/bulk-answer.ts [--rounds 30] [--answers 4] [--compare path/to/module.ts]
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { parseBulkEnrichAnswer } from '../../connectors/signal-api/bulk-answer.ts';
import { bulkAnswerTexts } from '../lib/sandbox-answers.ts';
import { median } from '../lib/stats.ts';

/** `parseBulkEnrichAnswer`'s contract: a zod-style safe-parse result of the normalized answer. */
type Parse = (body: unknown) => { success: true; data: { results: unknown[] } } | { success: false; error: unknown };

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '30' },
    answers: { type: 'string', default: '4' },
    compare: { type: 'string' },
  },
});
const rounds = Number(values.rounds);
const answerCount = Number(values.answers);
const compare: Parse | undefined = values.compare
  ? ((await import(pathToFileURL(resolve(values.compare)).href)) as { parseBulkEnrichAnswer: Parse })
      .parseBulkEnrichAnswer
  : undefined;

const fetchAnswers = (): Promise<string[]> => bulkAnswerTexts(answerCount, 'micro');

/** CPU milliseconds of `fn` over every answer. */
function cpuMs(texts: readonly string[], fn: (text: string) => unknown): number {
  const start = process.cpuUsage();
  let sink = 0;
  for (const text of texts) sink += (fn(text) as { results: unknown[] }).results.length;
  const used = process.cpuUsage(start);
  if (sink === 0) throw new Error('no results parsed');
  return (used.user + used.system) / 1000;
}

const texts = await fetchAnswers();
const mb = texts.reduce((n, t) => n + Buffer.byteLength(t), 0) / texts.length / 1e6;
function parsed(parse: Parse, text: string): { results: unknown[] } {
  const r = parse(JSON.parse(text));
  if (!r.success) throw new Error('the answer did not parse');
  return r.data;
}
const kit = (text: string) => parsed(parseBulkEnrichAnswer, text);
const base = (text: string) => ({ results: (JSON.parse(text) as { results: unknown[] }).results });
const other = compare ? (text: string) => parsed(compare, text) : undefined;
const signals = kit(texts[0] as string).results.reduce(
  (n: number, r) => n + ((r as { signals?: unknown[] }).signals?.length ?? 0),
  0,
);

for (let i = 0; i < 3; i++) {
  cpuMs(texts, kit);
  cpuMs(texts, base);
  if (other) cpuMs(texts, other);
}
const a: number[] = [];
const b: number[] = [];
const c: number[] = [];
for (let r = 0; r < rounds; r++) {
  // alternate the order so that a drifting machine weighs on both alike
  const order = r % 2 ? ['b', 'a', 'c'] : ['c', 'a', 'b'];
  for (const side of order) {
    if (side === 'a') a.push(cpuMs(texts, kit) / texts.length);
    else if (side === 'b') b.push(cpuMs(texts, base) / texts.length);
    else if (other) c.push(cpuMs(texts, other) / texts.length);
  }
}
const ratios = (x: number[], y: number[]) => median(x.map((v, i) => v / (y[i] as number)));
console.log(`answers: ${texts.length} × ${mb.toFixed(2)} MB, ${signals} signals in the first; ${rounds} rounds`);
console.log(`A  kit parse + normalize : ${median(a).toFixed(1)} ms CPU per answer`);
console.log(`B  JSON.parse alone      : ${median(b).toFixed(1)} ms CPU per answer`);
console.log(`A/B (median of rounds)   : ${ratios(a, b).toFixed(2)}×`);
if (other) {
  console.log(`A′ --compare module      : ${median(c).toFixed(1)} ms CPU per answer`);
  console.log(`A′/B                     : ${ratios(c, b).toFixed(2)}×`);
  console.log(`A/A′ (new over compared) : ${ratios(a, c).toFixed(3)}×`);
}
