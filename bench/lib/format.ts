import type { BenchResult, Table } from './types.ts';

/** 12345.6 → "12,346"; small numbers keep `digits` decimals. */
export function num(value: number, digits = 1): string {
  if (!Number.isFinite(value)) return String(value);
  const abs = Math.abs(value);
  const d = abs >= 1000 ? 0 : abs >= 100 ? Math.min(digits, 1) : digits;
  return value.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d });
}

export const mib = (kb: number) => `${num(kb / 1024, 0)} MiB`;
/** A worker's peak next to its idle RSS and the difference (the budget: idle + 150 MiB). */
export const peakOverIdle = (peakKb: number, idleKb: number) =>
  `${mib(peakKb)} (idle ${mib(idleKb)}, peak − idle ${mib(peakKb - idleKb)})`;
export const ratio = (a: number, b: number) => (b > 0 ? `${num(a / b, 2)}×` : 'n/a');
export const pct = (share: number) => `${num(share * 100, 1)} %`;
export const secs = (ms: number) => `${num(ms / 1000, 1)} s`;

export function markdownTable(table: Table): string {
  const cells = (row: (string | number)[]) => `| ${row.map((c) => String(c).replace(/\|/g, '\\|')).join(' | ')} |`;
  const align = table.columns.map((_, i) => (i === 0 ? '---' : '---:'));
  return [cells(table.columns), cells(align), ...table.rows.map(cells)].join('\n');
}

/** The text block of one result: title, table, checks, notes. */
export function renderResult(result: BenchResult): string {
  const failed = Object.entries(result.checks).filter(([, ok]) => !ok);
  const checks = Object.keys(result.checks).length
    ? failed.length === 0
      ? `Checks passed: ${Object.keys(result.checks).join(', ')}.`
      : `CHECKS FAILED: ${failed.map(([name]) => name).join(', ')}.`
    : '';
  return [
    `${result.title}`,
    '',
    markdownTable(result.table),
    '',
    checks,
    ...(result.notes.length ? ['', ...result.notes.map((n) => `- ${n}`)] : []),
  ].join('\n');
}
