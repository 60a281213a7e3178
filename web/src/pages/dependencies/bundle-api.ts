import { api, orgHeader, toFailure, unwrap } from '../../api/client';
import type { paths } from '../../api/schema';

type Json<T> = T extends { content: { 'application/json': infer B } } ? B : never;
type DataOf<T> = Json<T> extends { data: infer D } ? D : never;

export type Analysis = DataOf<paths['/api/v1/dependencies/export/analyze']['post']['responses'][200]>;
export type ExportSummary = DataOf<paths['/api/v1/dependencies/export']['post']['responses'][201]>;
export type Plan = DataOf<paths['/api/v1/dependencies/import/validate']['post']['responses'][200]>;
export type ImportReport = DataOf<paths['/api/v1/dependencies/import/execute']['post']['responses'][201]>;
export type Selection = { type: Analysis['selected'][number]['type']; id?: string };
export type ImportOptions = NonNullable<
  NonNullable<
    paths['/api/v1/dependencies/import/validate']['post']['requestBody']
  >['content']['application/json']['options']
>;
export type Policy = NonNullable<ImportOptions['conflict']>;

/** An exportable entity of the organization, as the selection step lists it. */
export interface Candidate {
  type: Selection['type'];
  id: string;
  name: string;
}

/** Everything the export wizard offers to select: connections, models, pipelines, dashboards. */
export async function loadCandidates(): Promise<Candidate[]> {
  const params = { header: orgHeader(), query: { limit: 200 } };
  const [connections, models, pipelines, dashboards] = await Promise.all([
    api.GET('/api/v1/connections', { params }).then(unwrap),
    api.GET('/api/v1/engine/models', { params }).then(unwrap),
    api.GET('/api/v1/engine/pipelines', { params }).then(unwrap),
    api.GET('/api/v1/uns/dashboards', { params }).then(unwrap),
  ]);
  return [
    ...connections.data.map((c) => ({ type: 'connection' as const, id: c.id, name: c.name })),
    ...models.data.map((m) => ({ type: 'model' as const, id: m.id, name: m.name })),
    ...pipelines.data.map((p) => ({ type: 'pipeline' as const, id: p.id, name: p.name })),
    ...dashboards.data.map((d) => ({ type: 'dashboard' as const, id: d.id, name: d.title })),
  ];
}

/** Downloads a stored export as a file (the request carries the organization header, so not a plain link). */
export async function downloadExport(id: string): Promise<void> {
  const response = await fetch(`/api/v1/dependencies/export/${id}/download`, {
    headers: orgHeader(),
    credentials: 'same-origin',
  });
  if (!response.ok) throw toFailure(response, await response.json().catch(() => null));
  const name =
    /filename="([^"]+)"/.exec(response.headers.get('content-disposition') ?? '')?.[1] ??
    'export.meridian.json';
  const url = URL.createObjectURL(await response.blob());
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
