// A test reporter that keeps, in test-results/file-times.json, the time each file took (the sum of its
// top-level tests), written as each ends: scripts/run-tests.mjs prints the longest once the run is over
// (so that the times are kept even when a run is cut short).
import { writeFileSync } from 'node:fs';

export const FILE_TIMES = 'test-results/file-times.json';

export default async function* fileTimes(source) {
  const files = {};
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    if (event.data.nesting !== 0 || !event.data.file) continue;
    // The file as written (scripts/run-tests.mjs runs it compiled, from test-results/js).
    const file = event.data.file
      .replace(`${process.cwd()}/`, '')
      .replace(/^test-results\/js\//, '')
      .replace(/\.js$/, '.ts');
    files[file] = (files[file] ?? 0) + (event.data.details?.duration_ms ?? 0);
    writeFileSync(FILE_TIMES, JSON.stringify(files));
  }
  yield ''; // a reporter is a generator of output; this one's output is the file
}
