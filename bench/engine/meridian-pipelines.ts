/**
 * The Meridian side of the UNS-triggered pipeline bench, in a process of its own (bench/server-process.ts)
 * as Node-RED is: a real Meridian (bench/uns/bench-server.ts) with one pipeline per history detail,
 * `trigger.uns` → `transform.jsonata` → `uns.publish`, in parallel mode up to the replica's limit.
 *   node --import tsx bench/engine/meridian-pipelines.ts <sqlite|postgres> <expression>
 */
import { fileURLToPath } from 'node:url';
import type { DialectName } from '../../src/storage/database.js';
import { freePort } from '../../test/helpers/free-port.js';
import { startMeasuredProfile } from '../measured-profile.js';
import { announceListening, spawnServerProcess } from '../server-process.js';
import { startBenchServer } from '../uns/bench-server.js';

export const DETAILS = ['minimal', 'standard', 'full'] as const;
export type Detail = (typeof DETAILS)[number];

export interface MeridianPipelines {
  url: string;
  username: string;
  password: string;
  topics: Record<Detail, { inTopic: string; outTopic: string }>;
  /** On PostgreSQL, the name of its database (its backends' CPU is Meridian's). */
  database?: string;
}

export function spawnMeridianPipelines(dialect: DialectName, expression: string) {
  return spawnServerProcess<MeridianPipelines>(fileURLToPath(import.meta.url), [dialect, expression], {
    bundled: true,
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const dialect = process.argv[2] as DialectName;
  const expression = process.argv[3]!;
  const bench = await startBenchServer(dialect, { mqttPort: await freePort() });
  const limit = bench.server.app.engine.concurrencyLimit;
  const topics = {} as MeridianPipelines['topics'];
  for (const detail of DETAILS) {
    const base = `v1/bench/${detail}`;
    const res = await bench.admin.post('/api/v1/engine/pipelines', {
      name: `Bench ${detail}`,
      enabled: true,
      settings: { historyDetail: detail, concurrency: { mode: 'parallel', max: limit } },
      nodes: [
        { id: 'in', name: 'In', type: 'trigger.uns', parameters: { filter: `${base}/in` } },
        { id: 'f', name: 'F', type: 'transform.jsonata', parameters: { expression } },
        { id: 'out', name: 'Out', type: 'uns.publish', parameters: { topic: `${base}/out` } },
      ],
      edges: [
        { source: 'in', target: 'f' },
        { source: 'f', target: 'out' },
      ],
    });
    if (res.status !== 201) throw new Error(`pipeline: ${res.status} ${res.text}`);
    topics[detail] = { inTopic: `${base}/in`, outTopic: `${base}/out` };
  }
  const port = bench.server.app.uns.broker.status().address?.split(':').pop();
  // A heap profile from here to the end (warm-up and rounds; Meridian is idle in Node-RED's rounds). A CPU
  // profile is the whole process's (`--cpu-prof`, bench/server-process.ts).
  const stopProfile = process.env.BENCH_HEAP_PROFILE
    ? await startMeasuredProfile(`pipelines-${dialect}`)
    : async () => {};
  announceListening(
    {
      url: `mqtt://127.0.0.1:${port}`,
      username: bench.orgId,
      password: bench.token,
      topics,
      database: bench.database.databaseUrl && new URL(bench.database.databaseUrl).pathname.slice(1),
    },
    async () => {
      await stopProfile();
      await bench.close();
    },
  );
}
