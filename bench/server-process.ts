import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

/**
 * A server a benchmark runs in a process of its own, as it would run in production, so that its heap,
 * garbage collection and JIT state neither weigh on nor profit from another server's run. The child
 * calls `announceListening` once it listens; `stop` sends SIGTERM and waits for it to exit.
 */
const READY = 'listening: ';

export async function spawnServerProcess<T>(
  script: string,
  args: string[] = [],
): Promise<T & { pid: number; stop(): Promise<void> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const lines = createInterface({ input: child.stdout });
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
