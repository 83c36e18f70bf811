/**
 * The first sheet of an `.xlsx` workbook as rows of text, streamed (exceljs's streaming reader: the sheet is never
 * held whole): its first non-empty row is the header, each later row a record by the header's names. Cells are
 * written as a person reads them in the sheet: a whole number as its digits (an id `9130001` stays `9130001`), a
 * date as `YYYY-MM-DD` (with the time, ISO 8601, when it has one), a formula as its result, rich text as its text.
 * A row with no value at all is no record (counted as a skipped line).
 *
 * A workbook is a zip, and a zip can be a bomb: its sizes are read from the zip's central directory and capped before
 * any entry is inflated (`workbook-zip.ts`), every entry is held to the size the directory gives as it inflates, and
 * the entries are handed to exceljs in the order it needs them (shared strings before sheets), so it never spools a
 * sheet into TMPDIR. A row past `MAX_XLSX_COLUMNS` is refused when it is met.
 */
import type { Readable } from 'node:stream';
import ExcelJS from 'exceljs';
import { InputError } from '../../connectors/errors.ts';
import { openWorkbookZip, type WorkbookZip } from './workbook-zip.ts';

/**
 * The most columns a sheet's row may reach (Excel allows 16,384). A CRM's widest export is some hundreds; a row
 * reaching further is refused when it is met, before its cells are laid out.
 */
export const MAX_XLSX_COLUMNS = 2048;

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

/** The parts of exceljs's streaming workbook reader this module drives (its own parse steps, one entry each). */
interface ExcelWorkbookSteps {
  sharedStrings?: unknown[];
  _parseRels(entry: Readable): Promise<void>;
  _parseWorkbook(entry: Readable): Promise<void>;
  _parseSharedStrings(entry: Readable): AsyncGenerator<unknown>;
  _parseStyles(entry: Readable): Promise<void>;
  _parseWorksheet(entry: Readable, sheetNo: string): Generator<{ eventType: string; value: unknown }>;
}

interface SheetReader extends AsyncIterable<ExcelJS.Row> {
  name?: string;
}

/**
 * The workbook's sheets as exceljs's sheet readers, in the workbook's order. Relations, the workbook, the shared
 * strings and the styles are read first, as exceljs needs them to read a sheet: a workbook without shared strings
 * gets an empty table, never a spooled sheet.
 */
async function* workbookSheets(zip: WorkbookZip): AsyncGenerator<SheetReader> {
  const reader = new ExcelJS.stream.xlsx.WorkbookReader(undefined as unknown as Readable, {
    sharedStrings: 'cache',
    styles: 'cache',
    hyperlinks: 'ignore',
    worksheets: 'emit',
  }) as unknown as ExcelWorkbookSteps;
  const rels = zip.entry('xl/_rels/workbook.xml.rels');
  if (rels) await reader._parseRels(rels);
  const workbook = zip.entry('xl/workbook.xml');
  if (workbook) await reader._parseWorkbook(workbook);
  const strings = zip.entry('xl/sharedStrings.xml');
  if (strings) for await (const _ of reader._parseSharedStrings(strings)) void _;
  reader.sharedStrings ??= [];
  const styles = zip.entry('xl/styles.xml');
  if (styles) await reader._parseStyles(styles);
  for (const sheetNo of zip.sheetNumbers()) {
    const entry = zip.entry(`xl/worksheets/sheet${sheetNo}.xml`);
    if (!entry) continue;
    try {
      for (const event of reader._parseWorksheet(entry, sheetNo)) {
        if (event.eventType === 'worksheet') yield event.value as SheetReader;
      }
    } finally {
      entry.destroy();
    }
  }
}

/**
 * The rows of the workbook's first sheet, or of the sheet named `sheet`; a workbook without it, one that is not a
 * workbook at all, or one past a bound (`workbook-zip.ts`, `MAX_XLSX_COLUMNS`) is an `InputError` naming the input.
 */
export async function* readSheetRows(
  body: Readable,
  url: string,
  onSkipped: (lines: number) => void,
  sheet?: string,
): AsyncGenerator<SheetRow> {
  let found = false;
  const zip = await openWorkbookZip(body, url);
  try {
    for await (const worksheet of workbookSheets(zip)) {
      if (sheet !== undefined && worksheet.name !== sheet) continue;
      found = true;
      yield* sheetRows(worksheet, url, onSkipped);
      break;
    }
  } catch (error) {
    if (error instanceof InputError) throw error;
    throw new InputError(`input ${url}: not a readable .xlsx workbook (${(error as Error).message})`, { cause: error });
  } finally {
    await zip.close();
  }
  if (!found) {
    throw new InputError(
      `input ${url}: ${sheet !== undefined ? `no sheet named "${sheet}"` : 'the workbook has no sheet'}`,
    );
  }
}

async function* sheetRows(
  worksheet: SheetReader,
  url: string,
  onSkipped: (lines: number) => void,
): AsyncGenerator<SheetRow> {
  let header: string[] | undefined;
  let row = 0;
  for await (const sheetRow of worksheet) {
    if (sheetRow.cellCount > MAX_XLSX_COLUMNS) {
      throw new InputError(
        `input ${url}: sheet row ${sheetRow.number} reaches column ${sheetRow.cellCount}, past the ${MAX_XLSX_COLUMNS} ` +
          'columns a workbook may have here; delete the columns the export does not need, or save the sheet as CSV',
      );
    }
    const values = (sheetRow.values as unknown[]).slice(1).map(cellText);
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
