/**
 * A V8 CPU profile of this process's main thread over a bench's measured rounds only (not its set-up,
 * warm-up or final checks, which `--cpu-prof` would mix in), for a bench that runs Meridian in its own
 * process. With BENCH_CPU_PROFILE=<dir> set, `startMeasuredProfile` starts the profiler and the function
 * it returns stops it and writes `<dir>/<name>-<time>.cpuprofile` (read it with bench/profile-top.ts, or
 * open it in Chrome's DevTools or speedscope); without it, both do nothing.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';

export async function startMeasuredProfile(name: string): Promise<() => Promise<void>> {
  const dir = process.env.BENCH_CPU_PROFILE;
  if (!dir) return async () => {};
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  // 1 ms samples as `--cpu-prof` takes them: fine enough for functions of a few µs over 100,000s of calls.
  await session.post('Profiler.setSamplingInterval', { interval: 1000 });
  await session.post('Profiler.start');
  return async () => {
    const { profile } = await session.post('Profiler.stop');
    session.disconnect();
    mkdirSync(dir, { recursive: true });
    const file = join(dir, `${name}-${new Date().toISOString().replace(/[:.]/g, '-')}.cpuprofile`);
    writeFileSync(file, JSON.stringify(profile));
    console.log(`  CPU profile of the measured rounds: ${file}`);
  };
}
