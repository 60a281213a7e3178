import { api, orgHeader, unwrap } from '../../api/client';
import type { paths } from '../../api/schema';

type Json<T> = T extends { content: { 'application/json': infer B } } ? B : never;
type DataOf<T> = Json<T> extends { data: infer D } ? D : never;

export type FocusedGraph = DataOf<paths['/api/v1/dependencies/graph']['get']['responses'][200]>;
export type GraphNode = FocusedGraph['nodes'][number];
export type GraphEdge = FocusedGraph['edges'][number];
export type Impact = DataOf<paths['/api/v1/dependencies/graph/impact']['post']['responses'][200]>;
export type Orphan = DataOf<paths['/api/v1/dependencies/graph/orphans']['get']['responses'][200]>[number];
export type EntityType = GraphNode['type'];
export type Direction = 'dependencies' | 'dependents' | 'both';
export type ImpactAction = 'delete' | 'stop' | 'disable' | 'update';

export const TYPE_LABEL: Record<EntityType, string> = {
  connection: 'Connection',
  function: 'Function',
  model: 'Model',
  pipeline: 'Pipeline',
  dashboard: 'Dashboard',
  folder: 'Folder',
  topic: 'Topic',
};

/** The console page of an entity, where there is one. */
export function pageOf(node: { type: EntityType; id: string | null; connectionId?: string }): string | null {
  if (node.id === null) return null;
  switch (node.type) {
    case 'connection':
      return `/connections/${node.id}`;
    case 'function':
      return node.connectionId ? `/connections/${node.connectionId}` : null;
    case 'model':
      return `/engine/models/${node.id}`;
    case 'dashboard':
      return `/dashboards/${node.id}`;
    default:
      return null;
  }
}

/** The link to the graph around an entity. */
export const graphLink = (type: EntityType, id: string) =>
  `/dependencies?focus=${encodeURIComponent(`${type}:${id}`)}`;

export async function loadGraph(focus: string, depth: number, direction: Direction): Promise<FocusedGraph> {
  const result = await api.GET('/api/v1/dependencies/graph', {
    params: { header: orgHeader(), query: { focus, depth, direction } },
  });
  return unwrap(result).data;
}

export async function loadImpact(type: EntityType, id: string, action: ImpactAction): Promise<Impact> {
  const result = await api.POST('/api/v1/dependencies/graph/impact', {
    params: { header: orgHeader() },
    body: { action, entity: { type, id } },
  });
  return unwrap(result).data;
}

export async function loadOrphans(): Promise<Orphan[]> {
  return unwrap(await api.GET('/api/v1/dependencies/graph/orphans', { params: { header: orgHeader() } }))
    .data;
}
