// Loaded into the soak's server process with `--import` (plain JavaScript: the server runs its bundle,
// without a TypeScript loader). It watches the event loop and the garbage collector, and on SIGUSR2
// writes what it saw since the last report as one line on stdout, `loop: {...}`, then starts over:
// - the event-loop delay histogram of perf_hooks (p50, p99, max),
// - garbage-collection pauses by kind (count, total and longest), from PerformanceObserver 'gc' entries,
// - stalls: a 5 ms timer that came due more than SOAK_STALL_MS (default 20) late, each with the
//   garbage-collection time that fell inside it, and the main thread's time on a CPU and waiting for
//   one (a stall on a loaded machine may be the thread waiting for a core, not code that ran).
// What code ran in a stall: run the soak with --cpu-profile and read the profile with stalls.ts.
import { openSync, readSync } from 'node:fs';
import { createRequire } from 'node:module';
import { monitorEventLoopDelay, PerformanceObserver, performance } from 'node:perf_hooks';
import { isMainThread } from 'node:worker_threads';

const STALL_MS = Number(process.env.SOAK_STALL_MS ?? 20);
const TICK_MS = 5;
const KINDS = { 1: 'minor', 2: 'major', 4: 'incremental', 8: 'weakcb', 16: 'minor' };

// Worker threads get the flag too; only the main thread's loop serves requests.
if (isMainThread) watch();

function watch() {
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  let gc = {};
  /** Recent GC pauses (start, end) in performance.now() ms, to find those inside a stall. */
  let recentGc = [];
  let stalls = [];

  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const kind = KINDS[entry.detail?.kind ?? entry.kind] ?? `kind${entry.detail?.kind}`;
      gc[kind] ??= { count: 0, ms: 0, maxMs: 0 };
      const total = gc[kind];
      total.count++;
      total.ms += entry.duration;
      total.maxMs = Math.max(total.maxMs, entry.duration);
      recentGc.push([entry.startTime, entry.startTime + entry.duration, kind]);
    }
    const horizon = performance.now() - 2000;
    if (recentGc.length > 200) recentGc = recentGc.filter(([, end]) => end > horizon);
  }).observe({ entryTypes: ['gc'] });

  /**
   * The main thread's time on a CPU and waiting for one (ns), from the kernel's scheduler statistics: on a
   * loaded machine a stall may be the thread waiting for a core, which is not the server's doing.
   */
  // Read 200 times a second: one open file read again from its start costs a fifth of a readFileSync
  // (open, stat, read, close) on the measured event loop. Opened here, on the main thread (thread-self).
  const schedstatFile = openSync('/proc/thread-self/schedstat', 'r');
  const schedstatText = Buffer.alloc(128);
  function schedstat() {
    const length = readSync(schedstatFile, schedstatText, 0, schedstatText.length, 0);
    const [onCpu, waiting] = schedstatText.toString('latin1', 0, length).split(' ');
    return { onCpu: Number(onCpu), waiting: Number(waiting) };
  }

  let expected = performance.now() + TICK_MS;
  let sched = schedstat();
  setInterval(() => {
    const now = performance.now();
    const late = now - expected;
    const previous = sched;
    sched = schedstat();
    if (late > STALL_MS) {
      const from = now - late - TICK_MS;
      let gcMs = 0;
      const gcKinds = new Set();
      for (const [start, end, kind] of recentGc) {
        const overlap = Math.min(end, now) - Math.max(start, from);
        if (overlap > 0) {
          gcMs += overlap;
          gcKinds.add(kind);
        }
      }
      // `at`: when the stall began on the monotonic clock in µs, the clock of a CPU profile's timestamps.
      const at = Number(process.hrtime.bigint() / 1000n) - Math.round((now - from) * 1000);
      const cpuMs = +((sched.onCpu - previous.onCpu) / 1e6).toFixed(1);
      const waitMs = +((sched.waiting - previous.waiting) / 1e6).toFixed(1);
      stalls.push({ at, ms: +late.toFixed(1), cpuMs, waitMs, gcMs: +gcMs.toFixed(1), gc: [...gcKinds] });
    }
    expected = now + TICK_MS;
  }, TICK_MS).unref();

  /**
   * SQLite statements on the main thread (better-sqlite3 is synchronous: each one holds the event loop),
   * timed by their text: better-sqlite3's Statement methods wrapped.
   */
  let statements = new Map();
  try {
    const Database = createRequire(`${process.cwd()}/`)('better-sqlite3');
    const probe = new Database(':memory:');
    const prototype = Object.getPrototypeOf(probe.prepare('select 1'));
    probe.close();
    // Each statement's text made one line once: the server reuses its prepared statements, and a regular
    // expression over the text on every run was work of the monitor's own on the measured event loop.
    const keys = new WeakMap();
    const keyOf = (statement) => {
      let key = keys.get(statement);
      if (key === undefined) {
        key = statement.source.replace(/\s+/g, ' ').slice(0, 160);
        keys.set(statement, key);
      }
      return key;
    };
    for (const method of ['all', 'get', 'run', 'iterate']) {
      const original = prototype[method];
      prototype[method] = function (...args) {
        const started = performance.now();
        try {
          return original.apply(this, args);
        } finally {
          const took = performance.now() - started;
          const key = keyOf(this);
          const total = statements.get(key);
          if (total) {
            total.count++;
            total.ms += took;
            if (took > total.maxMs) total.maxMs = took;
          } else statements.set(key, { count: 1, ms: took, maxMs: took });
        }
      };
    }
  } catch {
    // No better-sqlite3 here: nothing to time.
  }

  const ms = (ns) => +(ns / 1e6).toFixed(1);
  process.on('SIGUSR2', () => {
    const report = {
      delay: { p50: ms(delay.percentile(50)), p99: ms(delay.percentile(99)), max: ms(delay.max) },
      gc,
      stalls,
      sql: [...statements]
        .sort((a, b) => b[1].ms - a[1].ms)
        .slice(0, 12)
        .map(([text, t]) => ({ text, count: t.count, ms: +t.ms.toFixed(1), maxMs: +t.maxMs.toFixed(1) })),
    };
    statements = new Map();
    delay.reset();
    gc = {};
    stalls = [];
    process.stdout.write(`loop: ${JSON.stringify(report)}\n`);
  });
}
