// A test reporter that prints, once the run ends, the files that took longest (the sum of each file's
// top-level tests), so that every CI log shows where its time went.
const shown = 15;

export default async function* fileTimes(source) {
  const files = new Map();
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    if (event.data.nesting !== 0 || !event.data.file) continue;
    const file = event.data.file.replace(`${process.cwd()}/`, '');
    files.set(file, (files.get(file) ?? 0) + (event.data.details?.duration_ms ?? 0));
  }
  const rows = [...files].sort((a, b) => b[1] - a[1]);
  const total = rows.reduce((sum, [, ms]) => sum + ms, 0);
  yield `\nTest time by file: ${rows.length} files, ${(total / 1000).toFixed(0)} s in all; the longest:\n`;
  for (const [file, ms] of rows.slice(0, shown)) yield `${(ms / 1000).toFixed(1).padStart(8)} s  ${file}\n`;
}
