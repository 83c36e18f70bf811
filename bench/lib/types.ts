/** What every benchmark returns; `bench/run.ts` prints it, writes it as JSON and into RESULTS.md. */

export type Size = 'full' | 'smoke';

export interface Table {
  columns: string[];
  rows: (string | number)[][];
}

export interface BenchResult {
  name: string;
  size: Size;
  /** What was measured, in one sentence (with the sizes used). */
  title: string;
  startedAt: string;
  durationS: number;
  table: Table;
  /** Every number behind the table, for the JSON record and for tests. */
  metrics: Record<string, unknown>;
  /** Consistency checks (never timing thresholds): each must be true. */
  checks: Record<string, boolean>;
  /** Where the time goes, caveats, anything a reader needs next to the table. */
  notes: string[];
}

export interface Benchmark {
  name: string;
  /** One line for `bench/run.ts --list`. */
  description: string;
  run(size: Size, options?: RunOptions): Promise<BenchResult>;
}

export interface RunOptions {
  /** Progress lines (default: stderr). */
  log?: (line: string) => void;
}
