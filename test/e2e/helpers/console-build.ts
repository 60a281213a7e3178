import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

const WEB = 'web';
const DIST_INDEX = join(WEB, 'dist', 'index.html');
const LOCK = join(WEB, '.generated', 'build.lock');

function newestSource(dir: string): number {
  let newest = 0;
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const stat = statSync(path);
    newest = Math.max(newest, stat.isDirectory() ? newestSource(path) : stat.mtimeMs);
  }
  return newest;
}

/** Whether web/dist exists and is newer than every console source file. */
export function isConsoleBuildCurrent(): boolean {
  if (!existsSync(DIST_INDEX)) return false;
  const sources = Math.max(
    newestSource(join(WEB, 'src')),
    statSync(join(WEB, 'index.html')).mtimeMs,
    statSync(join(WEB, 'vite.config.ts')).mtimeMs,
  );
  return statSync(DIST_INDEX).mtimeMs >= sources;
}

/**
 * Builds the console once when web/dist is missing or older than its sources (`npm ci` builds it in CI;
 * this keeps a plain `node scripts/run-tests.mjs` after an edit honest). Test files run in parallel, so
 * a lock directory makes one build and the others wait for it.
 */
export async function ensureConsoleBuilt(): Promise<void> {
  if (isConsoleBuildCurrent()) return;
  mkdirSync(join(WEB, '.generated'), { recursive: true });
  let owner = false;
  try {
    mkdirSync(LOCK);
    owner = true;
  } catch {
    // another test file is building
  }
  if (!owner) {
    const deadline = Date.now() + 180_000;
    while (existsSync(LOCK) && Date.now() < deadline) await sleep(250);
    if (!isConsoleBuildCurrent())
      throw new Error('the console build made by another test file did not finish');
    return;
  }
  try {
    const result = spawnSync('npm', ['run', 'build:web'], { encoding: 'utf8', stdio: 'pipe' });
    if (result.status !== 0) {
      throw new Error(`npm run build:web failed:\n${result.stdout}\n${result.stderr}`);
    }
  } finally {
    rmSync(LOCK, { recursive: true, force: true });
  }
}
