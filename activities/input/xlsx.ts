/**
 * The first sheet of an `.xlsx` workbook as rows of text, streamed (exceljs's streaming reader: the sheet is never
 * held whole): its first non-empty row is the header, each later row a record by the header's names. Cells are
 * written as a person reads them in the sheet: a whole number as its digits (an id `9130001` stays `9130001`), a
 * date as `YYYY-MM-DD` (with the time, ISO 8601, when it has one), a formula as its result, rich text as its text.
 * A row with no value at all is no record (counted as a skipped line).
 */
import type { Readable } from 'node:stream';
import ExcelJS from 'exceljs';
import { InputError } from '../../connectors/errors.ts';

export interface SheetRow {
  /** The data row's number (1 = the row below the header), as a CSV's rows are numbered. */
  row: number;
  record: Record<string, string>;
}

/** A cell's value as the sheet shows it. */
export function cellText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return Number.isInteger(value) ? value.toFixed(0) : String(value);
  if (typeof value === 'boolean') return value ? 'TRUE' : 'FALSE';
  if (value instanceof Date) {
    const iso = value.toISOString();
    return iso.endsWith('T00:00:00.000Z') ? iso.slice(0, 10) : iso.replace('.000Z', 'Z');
  }
  if (typeof value === 'object') {
    const cell = value as { richText?: { text: string }[]; text?: unknown; result?: unknown; error?: string };
    if (Array.isArray(cell.richText)) return cell.richText.map((part) => part.text).join('');
    if ('result' in cell) return cellText(cell.result);
    if (cell.text !== undefined) return cellText(cell.text);
    if (cell.error !== undefined) return String(cell.error);
  }
  return String(value);
}

/**
 * The rows of the workbook's first sheet, or of the sheet named `sheet`; a workbook without it, or one that is not a
 * workbook at all, is an `InputError` naming the input.
 */
export async function* readSheetRows(
  body: Readable,
  url: string,
  onSkipped: (lines: number) => void,
  sheet?: string,
): AsyncGenerator<SheetRow> {
  const reader = new ExcelJS.stream.xlsx.WorkbookReader(body, {
    sharedStrings: 'cache',
    styles: 'cache',
    hyperlinks: 'ignore',
    worksheets: 'emit',
  });
  let header: string[] | undefined;
  let row = 0;
  let found = false;
  try {
    for await (const worksheet of reader) {
      const name = (worksheet as unknown as { name?: string }).name;
      if (found || (sheet !== undefined && name !== sheet)) {
        // Drain a sheet that is not read, so the reader goes on to the next.
        for await (const _ of worksheet) void _;
        continue;
      }
      found = true;
      for await (const sheetRow of worksheet) {
        const values = ((sheetRow as ExcelJS.Row).values as unknown[]).slice(1).map(cellText);
        if (values.every((value) => value.trim() === '')) {
          if (header) onSkipped(1);
          continue;
        }
        if (!header) {
          header = values.map((value) => value.trim());
          continue;
        }
        row += 1;
        const record: Record<string, string> = {};
        header.forEach((column, i) => {
          if (column !== '') record[column] = values[i] ?? '';
        });
        yield { row, record };
      }
    }
  } catch (error) {
    if (error instanceof InputError) throw error;
    throw new InputError(`input ${url}: not a readable .xlsx workbook (${(error as Error).message})`, { cause: error });
  }
  if (!found) {
    throw new InputError(
      `input ${url}: ${sheet !== undefined ? `no sheet named "${sheet}"` : 'the workbook has no sheet'}`,
    );
  }
}
