import { api, orgHeader, unwrap } from '../../api/client';
import type { paths } from '../../api/schema';

type Json<T> = T extends { content: { 'application/json': infer B } } ? B : never;
type Body<T> = T extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;

export type Dashboard = Json<paths['/api/v1/uns/dashboards/{id}']['get']['responses'][200]>['data'];
export type DashboardSummary = Json<paths['/api/v1/uns/dashboards']['get']['responses'][200]>['data'][number];
export type Folder = Json<paths['/api/v1/uns/dashboards/folders']['get']['responses'][200]>['data'][number];
export type Panel = Dashboard['panels'][number];
export type PanelInput = Body<paths['/api/v1/uns/dashboards/{id}/panels']['post']>['panel'];
export type Variable = Dashboard['variables'][number];
export type QueryBody = Body<paths['/api/v1/uns/dashboards/{id}/query']['post']>;
export type QueryAnswer = Json<paths['/api/v1/uns/dashboards/{id}/query']['post']['responses'][200]>['data'];
export type PanelAnswer = QueryAnswer['panels'][number];
export type Series = PanelAnswer['series'][number];
export type Point = Series['points'][number];
export type DashboardPatch = Body<paths['/api/v1/uns/dashboards/{id}']['patch']>;

const header = () => ({ header: orgHeader() });

export async function listFolders(): Promise<Folder[]> {
  return unwrap(await api.GET('/api/v1/uns/dashboards/folders', { params: header() })).data;
}

export async function createFolder(name: string, parentId: string | null): Promise<Folder> {
  return unwrap(
    await api.POST('/api/v1/uns/dashboards/folders', { params: header(), body: { name, parentId } }),
  ).data;
}

export async function deleteFolder(id: string, recursive: boolean): Promise<void> {
  unwrap(
    await api.DELETE('/api/v1/uns/dashboards/folders/{id}', {
      params: { ...header(), path: { id }, query: { recursive } },
    }),
  );
}

export async function listDashboards(query: {
  folderId?: string;
  tag?: string;
  search?: string;
  sort?: 'title' | 'createdAt' | 'updatedAt';
  offset?: number;
}) {
  const clean = Object.fromEntries(Object.entries(query).filter(([, v]) => v !== undefined && v !== ''));
  return unwrap(
    await api.GET('/api/v1/uns/dashboards', { params: { ...header(), query: { limit: 50, ...clean } } }),
  );
}

export async function getDashboard(id: string): Promise<Dashboard> {
  return unwrap(await api.GET('/api/v1/uns/dashboards/{id}', { params: { ...header(), path: { id } } })).data;
}

export async function createDashboard(title: string, folderId: string | null): Promise<Dashboard> {
  return unwrap(await api.POST('/api/v1/uns/dashboards', { params: header(), body: { title, folderId } }))
    .data;
}

export async function patchDashboard(id: string, body: DashboardPatch): Promise<Dashboard> {
  return unwrap(
    await api.PATCH('/api/v1/uns/dashboards/{id}', { params: { ...header(), path: { id } }, body }),
  ).data;
}

export async function cloneDashboard(id: string): Promise<Dashboard> {
  return unwrap(
    await api.POST('/api/v1/uns/dashboards/{id}/clone', { params: { ...header(), path: { id } }, body: {} }),
  ).data;
}

export async function deleteDashboard(id: string): Promise<void> {
  unwrap(await api.DELETE('/api/v1/uns/dashboards/{id}', { params: { ...header(), path: { id } } }));
}

export async function queryDashboard(id: string, body: QueryBody): Promise<QueryAnswer> {
  return unwrap(
    await api.POST('/api/v1/uns/dashboards/{id}/query', { params: { ...header(), path: { id } }, body }),
  ).data;
}

export async function variableValues(id: string, name: string): Promise<string[]> {
  return unwrap(
    await api.GET('/api/v1/uns/dashboards/{id}/variables/{name}/values', {
      params: { ...header(), path: { id, name } },
    }),
  ).data;
}

/** Opens the live value stream of a topic filter (Server-Sent Events); resolves to its body. */
export async function openFilterStream(
  filter: string,
  signal: AbortSignal,
): Promise<ReadableStream<Uint8Array>> {
  const params = { header: orgHeader(), query: { filter } };
  const body = unwrap(await api.GET('/api/v1/uns/data/stream', { params, parseAs: 'stream', signal }));
  if (!body) throw new TypeError('the live value stream has no body');
  return body;
}

export type PanelPatch = Omit<
  Body<paths['/api/v1/uns/dashboards/{id}/panels/{panelId}']['patch']>,
  'version'
>;

export async function addPanel(id: string, version: number, panel: PanelInput): Promise<Dashboard> {
  return unwrap(
    await api.POST('/api/v1/uns/dashboards/{id}/panels', {
      params: { ...header(), path: { id } },
      body: { version, panel },
    }),
  ).data;
}

export async function patchPanel(
  id: string,
  panelId: string,
  version: number,
  fields: PanelPatch,
): Promise<Dashboard> {
  return unwrap(
    await api.PATCH('/api/v1/uns/dashboards/{id}/panels/{panelId}', {
      params: { ...header(), path: { id, panelId } },
      body: { version, ...fields },
    }),
  ).data;
}

export async function deletePanel(id: string, panelId: string, version: number): Promise<Dashboard> {
  return unwrap(
    await api.DELETE('/api/v1/uns/dashboards/{id}/panels/{panelId}', {
      params: { ...header(), path: { id, panelId }, query: { version } },
    }),
  ).data;
}
