/** Parses RFC 4180 CSV (quoted fields, doubled quotes, CRLF or LF) into rows keyed by the header row. */
export function parseCsvRows(text: string): Record<string, string>[] {
  const records: string[][] = [];
  let field = '';
  let record: string[] = [];
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"' && field === '') quoted = true;
    else if (c === ',') {
      record.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      record.push(field);
      if (record.some((f) => f !== '')) records.push(record);
      record = [];
      field = '';
    } else field += c;
  }
  record.push(field);
  if (record.some((f) => f !== '')) records.push(record);
  const [header, ...rows] = records;
  if (!header) return [];
  return rows.map((row) => Object.fromEntries(header.map((name, i) => [name.trim(), row[i] ?? ''])));
}
