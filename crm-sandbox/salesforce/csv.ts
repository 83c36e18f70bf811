/** RFC 4180 CSV as Bulk API 2.0 reads and writes it (comma, LF line endings, double quotes doubled). */

export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  let i = 0;
  while (i < text.length) {
    const c = text.charAt(i);
    if (quoted) {
      if (c === '"' && text.charAt(i + 1) === '"') {
        field += '"';
        i += 2;
        continue;
      }
      if (c === '"') quoted = false;
      else field += c;
      i++;
      continue;
    }
    if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text.charAt(i + 1) === '\n') i++;
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else field += c;
    i++;
  }
  if (field !== '' || row.length > 0) {
    row.push(field);
    rows.push(row);
  }
  return rows;
}

/** Every cell quoted, as Bulk API 2.0 writes its result files. */
function quote(value: string): string {
  return `"${value.replaceAll('"', '""')}"`;
}

export function formatCsv(header: string[], rows: string[][]): string {
  return [header, ...rows].map((row) => row.map(quote).join(',')).join('\n') + '\n';
}
