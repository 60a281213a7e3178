import { type ChildProcess, type SpawnOptions, spawn } from 'node:child_process';

/**
 * Every process a benchmark starts goes through here, each as the leader of a process group of its own,
 * so that none outlives the benchmark: on success, on a failure (an uncaught error or rejection) and on
 * Ctrl-C or SIGTERM, every group still running gets SIGTERM, then SIGKILL after a grace period, and the
 * benchmark exits. On any other exit the groups get SIGKILL at once (an exit handler cannot wait).
 */
const children = new Set<ChildProcess>();
const GRACE_MS = 3000;
let installed = false;
let stopping = false;

export function spawnTracked(
  command: string,
  args: readonly string[],
  options: SpawnOptions = {},
): ChildProcess {
  installCleanup();
  const child = spawn(command, args, { ...options, detached: true });
  children.add(child);
  child.once('exit', () => children.delete(child));
  // A child that cannot start (ENOENT) emits 'error' and never 'exit'.
  child.once('error', () => children.delete(child));
  return child;
}

/** Like execFile: resolves with the standard output when the child exits 0, rejects otherwise. */
export function execTracked(
  command: string,
  args: readonly string[],
  options: SpawnOptions = {},
): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawnTracked(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.once('error', reject);
    child.once('close', (code, signal) => {
      if (code === 0) resolve({ stdout, stderr });
      else reject(new Error(`${command} ${args.join(' ')} exited (${signal ?? code}):\n${stderr}`));
    });
  });
}

function signalGroups(signal: NodeJS.Signals): void {
  for (const child of children) {
    if (!child.pid) continue;
    try {
      process.kill(-child.pid, signal);
    } catch {
      // the group is gone already
    }
  }
}

/** SIGTERM to every group still running; SIGKILL to what remains after the grace period. */
export async function stopAllChildren(): Promise<void> {
  if (children.size === 0) return;
  const exited = Promise.all(
    [...children].map((child) => new Promise<void>((resolve) => child.once('exit', () => resolve()))),
  );
  signalGroups('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([exited, new Promise<void>((resolve) => (timer = setTimeout(resolve, GRACE_MS)))]);
  clearTimeout(timer);
  signalGroups('SIGKILL');
}

/** True once a signal or a failure began stopping everything: the exit code is decided then. */
export function stoppingAll(): boolean {
  return stopping;
}

function finish(code: number): void {
  if (stopping) return;
  stopping = true;
  stopAllChildren().finally(() => process.exit(code));
}

function installCleanup(): void {
  if (installed) return;
  installed = true;
  process.once('SIGINT', () => finish(130));
  process.once('SIGTERM', () => finish(143));
  process.once('SIGHUP', () => finish(129));
  process.on('uncaughtException', (error) => {
    console.error(error);
    finish(1);
  });
  process.on('unhandledRejection', (error) => {
    console.error(error);
    finish(1);
  });
  process.once('exit', () => signalGroups('SIGKILL'));
}
