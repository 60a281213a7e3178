// A SQLite thread for sqlite-thread.test.ts that answers its own niceness, read from /proc as the
// scheduler sees it (after serveSqliteThread lowered it).
import { readFileSync } from 'node:fs';
import { serveSqliteThread } from '../sqlite-thread-serve.js';

serveSqliteThread<object, number>(() => {
  const stat = readFileSync('/proc/thread-self/stat', 'utf8');
  return { run: () => Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]), close() {} };
});
