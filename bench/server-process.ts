import { basename, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { serverBundleOptions } from '../scripts/bundle-options.mjs';
import { hasServerNodeFlags, SERVER_NODE_FLAGS } from '../src/platform/gc-tuning.js';
import { spawnTracked, stoppingAll } from './child-processes.js';

/**
 * A server a benchmark runs in a process of its own, as it would run in production, so that its heap,
 * garbage collection and JIT state neither weigh on nor profit from another server's run. Every server
 * process, a baseline's too, gets the Node flags `meridian serve` is started with (SERVER_NODE_FLAGS),
 * so that a ratio compares the servers and not their tuning. The child calls `announceListening` once
 * it listens; `stop` sends SIGTERM and waits for it to exit.
 */
const READY = 'listening: ';

export async function spawnServerProcess<T>(
  script: string,
  args: string[] = [],
  options: { bundled?: boolean } = {},
): Promise<T & { pid: number; stop(): Promise<void> }> {
  const entry = options.bundled ? await bundled(script) : ['--import', 'tsx', script];
  const child = spawnTracked(
    process.execPath,
    [...SERVER_NODE_FLAGS, ...benchNodeFlags(), ...entry, ...args],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const lines = createInterface({ input: child.stdout! });
  // Anything else the server prints passes through to stderr.
  const described = await new Promise<string>((resolve, reject) => {
    lines.on('line', (line) => {
      if (line.startsWith(READY)) resolve(line.slice(READY.length));
      else console.error(`[${args.join(' ') || script}] ${line}`);
    });
    child.once('exit', (code) =>
      reject(new Error(`${script} ${args.join(' ')} exited (${code}) before it listened`)),
    );
  });
  return {
    ...(JSON.parse(described) as T),
    pid: child.pid!,
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/**
 * With BENCH_CPU_PROFILE=<dir>, each server process writes a V8 CPU profile there when it exits (open it
 * in Chrome's DevTools or speedscope): where a server's time goes, under the bench's own load. With
 * BENCH_NODE_FLAGS="<flags>", each also gets those Node or V8 flags, after SERVER_NODE_FLAGS (so a later
 * `--max-semi-space-size` wins): `--trace-gc-nvp` for what each collection did, or a collector setting
 * to try against the server's own on both sides.
 */
function benchNodeFlags(): string[] {
  const dir = process.env.BENCH_CPU_PROFILE;
  const extra = process.env.BENCH_NODE_FLAGS?.split(/\s+/).filter(Boolean) ?? [];
  return [...extra, ...(dir ? ['--cpu-prof', `--cpu-prof-dir=${dir}`] : [])];
}

/**
 * `script` bundled as the server ships (scripts/bundle-options.mjs, what `npm start` runs), in dist/bench/:
 * tsx's transform keeps function names by wrapping every function made at run time in a call that
 * defines its `name`, which the shipped bundle does not do (in a profile of pipeline executions the
 * engine's closures spent ~2% of the event loop there).
 */
async function bundled(script: string): Promise<string[]> {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const outfile = join(root, 'dist', 'bench', `${basename(script).replace(/\.ts$/, '')}.mjs`);
  const options = serverBundleOptions(script, outfile);
  // The bench's own process helpers come along; esbuild (which bundles) is not one to inline.
  await build({ ...options, external: [...(options.external ?? []), 'esbuild'] });
  return [outfile];
}

/** In the child: tells the parent what it serves, and closes the server on SIGTERM. */
export function announceListening(description: object, close: () => Promise<void>): void {
  process.stdout.write(`${READY}${JSON.stringify(description)}\n`);
  process.once('SIGTERM', () => {
    close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
}

/**
 * For a benchmark that runs Meridian in its own process: runs the benchmark again in a child process
 * started with the server's Node flags, and exits with its exit code, unless this process has them
 * already (then it resolves at once). Await it first. Ctrl-C here stops the child and all it started.
 */
export async function relaunchWithServerFlags(): Promise<void> {
  if (hasServerNodeFlags()) return;
  const child = spawnTracked(
    process.execPath,
    [...SERVER_NODE_FLAGS, ...process.execArgv, ...process.argv.slice(1)],
    { stdio: 'inherit' },
  );
  const code = await new Promise<number>((resolve) => child.once('exit', (status) => resolve(status ?? 1)));
  // After Ctrl-C the signal's exit code stands (the child was stopped on its account).
  if (!stoppingAll()) process.exit(code);
  return new Promise<void>(() => {});
}
