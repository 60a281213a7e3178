/**
 * Export and import of a configuration of 1,000 entities (100 REST connections with a secret and 3
 * functions each, 200 models, 300 pipelines each calling a function and validating with a model, 50
 * folders, 50 dashboards), through the API of a real Meridian: export = generate + download; import =
 * validate + execute into an empty organization. Baseline in the same run: a JSON serialization of the
 * same rows (export: select every row of those tables and JSON.stringify them; import: JSON.parse them and
 * insert them with new ids in one transaction). Target: each under 5 s. Best of three, printed with ratios.
 *   node --import tsx bench/dependencies/bundle.bench.ts [sqlite|postgres]
 */
import { randomUUID } from 'node:crypto';
import type { DialectName } from '../../src/storage/database.js';
import { ensureContractNodeTypes } from '../../test/dependencies/bundle-helpers.js';
import type { TestClient } from '../../test/helpers/http-client.js';
import { startBenchServer } from '../uns/bench-server.js';

const dialect = (process.argv[2] ?? 'sqlite') as DialectName;
const TABLES = [
  'connections',
  'connection_functions',
  'models',
  'pipelines',
  'dashboard_folders',
  'dashboards',
] as const;

async function ok(res: Promise<{ status: number; body: any; text: string }>, status = 201) {
  const r = await res;
  if (r.status !== status) throw new Error(`${r.status} ${r.text.slice(0, 300)}`);
  return r.body.data;
}

/** Runs `work` over `items` with `width` requests in flight. */
async function pool<T, R>(items: T[], width: number, work: (item: T, i: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await work(items[i]!, i);
      }
    }),
  );
  return out;
}

async function seed(api: TestClient) {
  const connections = await pool([...Array(100).keys()], 8, (i) =>
    ok(
      api.post('/api/v1/connections', {
        name: `Gateway ${i}`,
        protocol: 'rest',
        config: { baseUrl: `http://10.0.0.${i}/api`, bearerToken: `secret-${i}` },
      }),
    ),
  );
  const functions = await pool([...Array(300).keys()], 8, (i) =>
    ok(
      api.post(`/api/v1/connections/${connections[i % 100].id}/functions`, {
        name: `read ${i}`,
        type: 'rest.get',
        config: { path: `/v/${i}` },
      }),
    ),
  );
  const models = await pool([...Array(200).keys()], 8, (i) =>
    ok(
      api.post('/api/v1/engine/models', {
        name: `Model ${i}`,
        fields: [
          { name: 'value', type: 'number' },
          { name: 'unit', type: 'string' },
        ],
      }),
    ),
  );
  const pipelines = await pool([...Array(300).keys()], 8, (i) =>
    ok(
      api.post('/api/v1/engine/pipelines', {
        name: `Pipeline ${i}`,
        nodes: [
          { id: 'start', name: 'Start', type: 'trigger.manual', parameters: {} },
          {
            id: 'call',
            name: 'Call',
            type: 'connection.call',
            parameters: { connectionId: functions[i].connectionId, functionId: functions[i].id },
          },
          { id: 'check', name: 'Check', type: 'model.validate', parameters: { modelId: models[i % 200].id } },
          { id: 'out', name: 'Publish', type: 'uns.publish', parameters: { topic: `v1/acme/p${i}/value` } },
        ],
        edges: [
          { id: 'e1', source: 'start', sourcePort: 'main', target: 'call' },
          { id: 'e2', source: 'call', sourcePort: 'main', target: 'check' },
          { id: 'e3', source: 'check', sourcePort: 'main', target: 'out' },
        ],
      }),
    ),
  );
  const folders = await pool([...Array(50).keys()], 8, (i) =>
    ok(api.post('/api/v1/uns/dashboards/folders', { name: `Area ${i}` })),
  );
  const dashboards = await pool([...Array(50).keys()], 8, (i) =>
    ok(
      api.post('/api/v1/uns/dashboards', {
        title: `Board ${i}`,
        folderId: folders[i].id,
        panels: [
          {
            type: 'stat',
            title: 'Value',
            gridPos: { x: 0, y: 0, w: 6, h: 4 },
            queries: [{ topic: `v1/acme/p${i}/value` }],
          },
        ],
      }),
    ),
  );
  return {
    pipelines,
    dashboards,
    models,
    total:
      connections.length +
      functions.length +
      models.length +
      pipelines.length +
      folders.length +
      dashboards.length,
  };
}

async function best(runs: number, work: () => Promise<void>): Promise<number> {
  let min = Number.POSITIVE_INFINITY;
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    await work();
    min = Math.min(min, performance.now() - started);
  }
  return min;
}

async function main() {
  // The contract's reference-carrying node types may come from other branches (see bundle-helpers.ts).
  ensureContractNodeTypes();
  const bench = await startBenchServer(dialect);
  try {
    const admin = bench.admin.inOrg(bench.orgId);
    console.log(`seeding 1,000 entities on ${dialect}…`);
    const seeded = await seed(admin);
    const select = [
      ...seeded.pipelines.map((p: { id: string }) => ({ type: 'pipeline', id: p.id })),
      ...seeded.dashboards.map((d: { id: string }) => ({ type: 'dashboard', id: d.id })),
      ...seeded.models.map((m: { id: string }) => ({ type: 'model', id: m.id })),
    ];
    let bundle: unknown;
    const exportMs = await best(3, async () => {
      const summary = await ok(admin.post('/api/v1/dependencies/export', { select }));
      if (summary.entityCount !== seeded.total)
        throw new Error(`exported ${summary.entityCount} of ${seeded.total}`);
      bundle = (await admin.get(`/api/v1/dependencies/export/${summary.id}/download`)).body;
    });
    const db = bench.server.storage.db;
    let rowsJson = '';
    const exportBaseMs = await best(3, async () => {
      const rows: Record<string, unknown[]> = {};
      for (const table of TABLES)
        rows[table] = await db
          .selectFrom(table)
          .selectAll()
          .where('organization_id', '=', bench.orgId)
          .execute();
      rowsJson = JSON.stringify(rows);
    });

    const importRuns: number[] = [];
    for (let i = 0; i < 3; i++) {
      const org = await ok(admin.post('/api/v1/organizations', { name: `Import target ${i}` }));
      const target = admin.inOrg(org.id);
      const started = performance.now();
      const plan = await ok(target.post('/api/v1/dependencies/import/validate', { bundle }), 200);
      if (!plan.canExecute) throw new Error(JSON.stringify(plan.problems.slice(0, 3)));
      const inputs = Object.fromEntries(plan.requiredInputs.map((k: string) => [k, 'bench-secret']));
      const report = await ok(
        target.post('/api/v1/dependencies/import/execute', { planId: plan.planId, inputs }),
      );
      importRuns.push(performance.now() - started);
      if (report.created !== seeded.total) throw new Error(`imported ${report.created} of ${seeded.total}`);
    }
    const importBaseMs = await best(3, async () => {
      const org = await ok(
        admin.post('/api/v1/organizations', { name: `Baseline ${randomUUID().slice(0, 8)}` }),
      );
      const rows = JSON.parse(rowsJson) as Record<string, Record<string, unknown>[]>;
      // New ids, references between the rows (function → connection, folder → parent, dashboard → folder) following.
      const ids = new Map<string, string>();
      for (const table of TABLES) for (const r of rows[table]!) ids.set(r.id as string, randomUUID());
      const remap = (v: unknown) => (typeof v === 'string' ? (ids.get(v) ?? v) : v);
      await db.transaction().execute(async (trx) => {
        for (const table of TABLES) {
          const fresh = rows[table]!.map((r) => ({
            ...r,
            id: ids.get(r.id as string),
            organization_id: org.id,
            ...('connection_id' in r && { connection_id: remap(r.connection_id) }),
            ...('parent_id' in r && { parent_id: remap(r.parent_id), parent_key: remap(r.parent_key) }),
            ...('folder_id' in r && { folder_id: remap(r.folder_id) }),
          }));
          for (let i = 0; i < fresh.length; i += 100)
            await trx
              .insertInto(table)
              .values(fresh.slice(i, i + 100) as never)
              .execute();
        }
      });
    });
    const importMs = Math.min(...importRuns);
    console.log(
      `entities: ${seeded.total}; bundle ${JSON.stringify(bundle).length} bytes; rows as JSON ${rowsJson.length} bytes`,
    );
    console.log(
      `export (generate + download): ${exportMs.toFixed(0)} ms; baseline rows → JSON: ${exportBaseMs.toFixed(0)} ms; ratio ${(exportMs / exportBaseMs).toFixed(1)}x; target < 5000 ms: ${exportMs < 5000 ? 'met' : 'MISSED'}`,
    );
    console.log(
      `import (validate + execute): ${importMs.toFixed(0)} ms; baseline JSON → rows: ${importBaseMs.toFixed(0)} ms; ratio ${(importMs / importBaseMs).toFixed(1)}x; target < 5000 ms: ${importMs < 5000 ? 'met' : 'MISSED'}`,
    );
  } finally {
    await bench.close();
  }
}

await main();
