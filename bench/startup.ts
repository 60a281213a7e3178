/**
 * Start-up to ready on the embedded default with an existing database, against a baseline measured in
 * the same run: a bare Fastify process that answers one route. Prints both and the ratio.
 *   node --import tsx bench/startup.ts [runs]
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../test/helpers/free-port.js';
import { spawnTracked } from './child-processes.js';

const runs = Number(process.argv[2] ?? 7);

async function timeToReady(args: string[], env: Record<string, string>, url: (port: number) => string) {
  const port = await freePort();
  const started = performance.now();
  const child = spawnTracked(process.execPath, args, {
    env: { ...process.env, ...env, MERIDIAN_HTTP_PORT: String(port), PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let logged = '';
  child.stdout?.on('data', (c: Buffer) => {
    logged += c.toString();
  });
  try {
    for (;;) {
      try {
        const res = await fetch(url(port));
        if (res.status === 200) break;
      } catch {
        // not listening yet
      }
      await new Promise((r) => setTimeout(r, 5));
    }
    const elapsed = performance.now() - started;
    const reported = /"readyMs":(\d+)/.exec(logged)?.[1];
    return { elapsed, reported: reported ? Number(reported) : null };
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

const dataDir = mkdtempSync(join(tmpdir(), 'meridian-bench-startup-'));
const baselineFile = join(dataDir, 'baseline.mjs');
writeFileSync(
  baselineFile,
  `import Fastify from '${join(process.cwd(), 'node_modules/fastify/fastify.js')}';
const app = Fastify(); app.get('/readyz', async () => ({ status: 'ready' }));
await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT) });`,
);
const env = {
  MERIDIAN_DATA_DIR: dataDir,
  MERIDIAN_HTTP_HOST: '127.0.0.1',
  MERIDIAN_MQTT_PORT: '0',
  MERIDIAN_ADMIN_PASSWORD: 'bench-password-123',
};
try {
  // First start creates and migrates the database; the measured runs start on the existing one.
  await timeToReady(['bin/meridian.js', 'serve'], env, (p) => `http://127.0.0.1:${p}/readyz`);
  const meridian: number[] = [];
  const reported: number[] = [];
  const baseline: number[] = [];
  for (let i = 0; i < runs; i++) {
    const m = await timeToReady(['bin/meridian.js', 'serve'], env, (p) => `http://127.0.0.1:${p}/readyz`);
    meridian.push(m.elapsed);
    if (m.reported !== null) reported.push(m.reported);
    baseline.push((await timeToReady([baselineFile], {}, (p) => `http://127.0.0.1:${p}/readyz`)).elapsed);
  }
  const m = median(meridian);
  const b = median(baseline);
  console.log(`start-up to ready, existing SQLite database, median of ${runs} runs:`);
  console.log(
    `  meridian (spawn to /readyz 200): ${m.toFixed(0)} ms   (logged "ready in": ${median(reported)} ms)`,
  );
  console.log(`  baseline bare Fastify process:   ${b.toFixed(0)} ms`);
  console.log(`  ratio meridian / baseline:       ${(m / b).toFixed(2)}x   target: under 1500 ms`);
} finally {
  rmSync(dataDir, { recursive: true, force: true });
}
