/**
 * Rewrites test/file-costs.json from a vitest JSON report (by default the one `npm test` leaves in .tmp/vitest.json):
 * the seconds each test file took, for files of 5 s or more. vitest.config.ts starts files in that order, longest first.
 *
 *   node scripts/record-test-costs.ts [.tmp/vitest.json]
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';

interface Report {
  testResults: Array<{ name: string; startTime: number; endTime: number }>;
}

const MIN_SECONDS = 5;
const root = resolve(import.meta.dirname, '..');
// The report may come from another checkout (a CI clone): file names are kept from their test/ folder on.
const report = JSON.parse(readFileSync(process.argv[2] ?? resolve(root, '.tmp/vitest.json'), 'utf8')) as Report;
const costs = report.testResults
  .map(
    (file) =>
      [file.name.slice(file.name.indexOf('/test/') + 1), Math.round((file.endTime - file.startTime) / 1000)] as const,
  )
  .filter(([, seconds]) => seconds >= MIN_SECONDS)
  .sort((a, b) => b[1] - a[1]);
writeFileSync(resolve(root, 'test/file-costs.json'), `${JSON.stringify(Object.fromEntries(costs), null, 2)}\n`);
console.log(`test/file-costs.json: ${costs.length} files of ${MIN_SECONDS} s or more`);
