/**
 * The output formats of a flat table (`--format`), their file extensions and content types: what the CLI and the
 * layouts need, apart from the encoders (encode.ts), so that a command that writes no table loads no Parquet writer.
 */

export const OUTPUT_FORMATS = ['jsonl', 'csv', 'parquet'] as const;

/** The JSONL compression (`--compression`), as jobs/types.ts's `Compression`. */
export type Compression = 'gzip' | 'none';
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** `jsonl`, `csv`, `parquet` or several, comma-separated (`--format`), in that canonical order, without repeats. */
export function parseFormats(value: string): OutputFormat[] {
  const named = value
    .split(',')
    .map((part) => part.trim().toLowerCase())
    .filter((part) => part !== '');
  const unknown = named.filter((part) => !(OUTPUT_FORMATS as readonly string[]).includes(part));
  if (named.length === 0 || unknown.length > 0) {
    throw new Error(
      `--format must be jsonl, csv or parquet (or several, comma-separated), got "${unknown[0] ?? value}"`,
    );
  }
  return OUTPUT_FORMATS.filter((format) => named.includes(format));
}

/** A table part's file extension: JSONL follows `--compression`; CSV is plain (for spreadsheets and CRM imports); Parquet compresses inside. */
export function tableExtension(format: OutputFormat, compression: Compression | undefined): string {
  if (format === 'csv') return '.csv';
  if (format === 'parquet') return '.parquet';
  return compression === 'none' ? '.jsonl' : '.jsonl.gz';
}

export function tableContentType(format: OutputFormat, compression: Compression | undefined): string {
  if (format === 'csv') return 'text/csv; charset=utf-8';
  if (format === 'parquet') return 'application/vnd.apache.parquet';
  return compression === 'none' ? 'application/x-ndjson' : 'application/gzip';
}
