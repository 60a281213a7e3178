import { api, orgHeader, unwrap } from '../../api/client';
import type { paths } from '../../api/schema';

type Json<T> = T extends { content: { 'application/json': infer B } } ? B : never;
type DataOf<T> = Json<T> extends { data: infer D } ? D : never;

export type ConnectionItem = Json<paths['/api/v1/connections']['get']['responses'][200]>['data'][number];
export type RuntimeItem = DataOf<paths['/api/v1/connections/runtime']['get']['responses'][200]>[number];
export type ExecutionItem = Json<paths['/api/v1/engine/executions']['get']['responses'][200]>['data'][number];
export type PipelineItem = Json<paths['/api/v1/engine/pipelines']['get']['responses'][200]>['data'][number];
export type BrokerStatus = DataOf<paths['/api/v1/uns/broker']['get']['responses'][200]>;
export type Maintenance = DataOf<
  paths['/api/v1/organizations/settings/maintenance']['get']['responses'][200]
>;
export type ModelItem = Json<paths['/api/v1/engine/models']['get']['responses'][200]>['data'][number];
export type DashboardItem = Json<paths['/api/v1/uns/dashboards']['get']['responses'][200]>['data'][number];

const header = () => ({ header: orgHeader() });

/** A connection with its runtime (state, last error), as the home page lists it. */
export interface ConnectionHealth {
  id: string;
  name: string;
  protocol: string;
  state: RuntimeItem['state'];
  since: string | null;
  lastError: string | null;
  desiredState: ConnectionItem['desiredState'];
}

/** The organization's connections joined with their runtimes: those that are not connected first. */
export async function connectionHealth(): Promise<ConnectionHealth[]> {
  const [list, runtimes] = await Promise.all([
    api.GET('/api/v1/connections', { params: { ...header(), query: { limit: 200 } } as never }).then(unwrap),
    api.GET('/api/v1/connections/runtime', { params: header() }).then(unwrap),
  ]);
  const byId = new Map(runtimes.data.map((runtime) => [runtime.connectionId, runtime]));
  return list.data.map((connection) => {
    const runtime = byId.get(connection.id);
    return {
      id: connection.id,
      name: connection.name,
      protocol: connection.protocol,
      state: runtime?.state ?? connection.state,
      since: runtime?.since ?? null,
      lastError: runtime?.lastError ?? null,
      desiredState: connection.desiredState,
    };
  });
}

/** A pipeline with failed executions in the window: how many, and the newest failure's error. */
export interface FailingPipeline {
  pipelineId: string;
  name: string;
  failures: number;
  last: ExecutionItem;
}

/** Pipelines with failed executions since `from`, most failures first; and the pipeline count. */
export async function failingPipelines(
  from: Date,
): Promise<{ failing: FailingPipeline[]; pipelines: number }> {
  const [failed, pipelines] = await Promise.all([
    api
      .GET('/api/v1/engine/executions', {
        params: {
          ...header(),
          query: { status: 'failed', from: from.toISOString(), limit: 200, sort: 'queuedAt', order: 'desc' },
        } as never,
      })
      .then(unwrap),
    api
      .GET('/api/v1/engine/pipelines', { params: { ...header(), query: { limit: 200 } } as never })
      .then(unwrap),
  ]);
  const names = new Map(pipelines.data.map((p) => [p.id, p.name]));
  const byPipeline = new Map<string, FailingPipeline>();
  for (const execution of failed.data) {
    const entry = byPipeline.get(execution.pipelineId);
    if (entry) entry.failures += 1;
    else
      byPipeline.set(execution.pipelineId, {
        pipelineId: execution.pipelineId,
        name: names.get(execution.pipelineId) ?? execution.pipelineId,
        failures: 1,
        last: execution,
      });
  }
  const failing = [...byPipeline.values()].sort((a, b) => b.failures - a.failures);
  return { failing, pipelines: pipelines.pagination?.total ?? pipelines.data.length };
}

export async function brokerStatus(): Promise<BrokerStatus> {
  return unwrap(await api.GET('/api/v1/uns/broker', { params: header() })).data;
}

export async function maintenanceState(): Promise<Maintenance> {
  return unwrap(await api.GET('/api/v1/organizations/settings/maintenance', { params: header() })).data;
}

/** One entity changed lately, with the page that shows it. */
export interface RecentChange {
  kind: 'Connection' | 'Pipeline' | 'Model' | 'Dashboard';
  name: string;
  href: string;
  updatedAt: string;
  version: number | null;
}

/**
 * The entities changed most recently (connections, pipelines, models, dashboards), newest first: what
 * everyone who reads them may see (the audit log is for Admins and Owners). A list the credential may
 * not read is left out.
 */
export async function recentChanges(count = 8): Promise<RecentChange[]> {
  const recent = { sort: 'updatedAt', order: 'desc', limit: count };
  const settle = <T>(promise: Promise<T[]>) => promise.catch(() => [] as T[]);
  const [connections, pipelines, models, dashboards] = await Promise.all([
    settle(
      api
        .GET('/api/v1/connections', { params: { ...header(), query: { limit: 200 } } as never })
        .then((r) => unwrap(r).data),
    ),
    settle(
      api
        .GET('/api/v1/engine/pipelines', { params: { ...header(), query: recent } as never })
        .then((r) => unwrap(r).data),
    ),
    settle(
      api
        .GET('/api/v1/engine/models', { params: { ...header(), query: recent } as never })
        .then((r) => unwrap(r).data),
    ),
    settle(
      api
        .GET('/api/v1/uns/dashboards', { params: { ...header(), query: { limit: 100 } } as never })
        .then((r) => unwrap(r).data),
    ),
  ]);
  const changes: RecentChange[] = [
    ...connections.map((c) => ({
      kind: 'Connection' as const,
      name: c.name,
      href: `/connections/${c.id}`,
      updatedAt: c.updatedAt,
      version: c.version,
    })),
    ...pipelines.map((p) => ({
      kind: 'Pipeline' as const,
      name: p.name,
      href: `/engine/pipelines/${p.id}`,
      updatedAt: p.updatedAt,
      version: p.version,
    })),
    ...models.map((m) => ({
      kind: 'Model' as const,
      name: m.name,
      href: `/engine/models/${m.id}`,
      updatedAt: m.updatedAt,
      version: m.version,
    })),
    ...dashboards.map((d) => ({
      kind: 'Dashboard' as const,
      name: d.title,
      href: `/dashboards/${d.id}`,
      updatedAt: d.updatedAt,
      version: d.version ?? null,
    })),
  ];
  return changes.sort((a, b) => b.updatedAt.localeCompare(a.updatedAt)).slice(0, count);
}
