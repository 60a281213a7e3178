/**
 * A V8 CPU profile of this process's main thread over a bench's measured rounds only (not its set-up,
 * warm-up or final checks, which `--cpu-prof` would mix in), for a bench that runs Meridian in its own
 * process. With BENCH_CPU_PROFILE=<dir> set, `startMeasuredProfile` starts the profiler and the function
 * it returns stops it and writes `<dir>/<name>-<time>.cpuprofile` (read it with bench/profile-top.ts, or
 * open it in Chrome's DevTools or speedscope); without it, both do nothing.
 *
 * With BENCH_HEAP_PROFILE=<dir>, it writes `<dir>/<name>-<time>.heapprofile` instead: V8's sampling heap
 * profile of every allocation over the rounds, those young collections freed included (one sample every
 * 64 KiB allocated), by the call stack that made it. What allocates drives the young-generation
 * collections; open it in Chrome's DevTools (Memory) or speedscope.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';

export async function startMeasuredProfile(name: string): Promise<() => Promise<void>> {
  // The heap profile when both are asked for; an empty value asks for neither.
  const heap = Boolean(process.env.BENCH_HEAP_PROFILE);
  const dir = heap ? process.env.BENCH_HEAP_PROFILE : process.env.BENCH_CPU_PROFILE;
  if (!dir) return async () => {};
  const session = new Session();
  session.connect();
  if (heap) {
    await session.post('HeapProfiler.startSampling', {
      samplingInterval: 64 * 1024,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    });
  } else {
    await session.post('Profiler.enable');
    // 1 ms samples as `--cpu-prof` takes them: fine enough for functions of a few µs over 100,000s of calls.
    await session.post('Profiler.setSamplingInterval', { interval: 1000 });
    await session.post('Profiler.start');
  }
  return async () => {
    const { profile } = heap
      ? await session.post('HeapProfiler.stopSampling')
      : await session.post('Profiler.stop');
    session.disconnect();
    mkdirSync(dir, { recursive: true });
    const stamp = new Date().toISOString().replace(/[:.]/g, '-');
    const file = join(dir, `${name}-${stamp}.${heap ? 'heapprofile' : 'cpuprofile'}`);
    writeFileSync(file, JSON.stringify(profile));
    console.log(`  ${heap ? 'heap' : 'CPU'} profile of the measured rounds: ${file}`);
  };
}
