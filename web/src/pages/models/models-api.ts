import { api, orgHeader, unwrap } from '../../api/client';
import type { paths } from '../../api/schema';

type Json<T> = T extends { content: { 'application/json': infer B } } ? B : never;
type DataOf<T> = Json<T> extends { data: infer D } ? D : never;

export type ModelListItem = Json<paths['/api/v1/engine/models']['get']['responses'][200]>['data'][number];
export type ModelListQuery = NonNullable<paths['/api/v1/engine/models']['get']['parameters']['query']>;
export type ModelVersion = Json<
  paths['/api/v1/engine/models/{id}/versions']['get']['responses'][200]
>['data'][number];
export type VersionDiff = DataOf<
  paths['/api/v1/engine/models/{id}/versions/{version}/diff']['get']['responses'][200]
>;
export type ModelBinding = DataOf<
  paths['/api/v1/engine/models/{id}/bindings']['get']['responses'][200]
>[number];

export const FIELD_TYPES = [
  'number',
  'integer',
  'boolean',
  'string',
  'datetime',
  'enum',
  'object',
  'array',
  'model',
  'any',
] as const;
export type FieldType = (typeof FIELD_TYPES)[number];

/** The shape of a value: what a field and an array's items share. */
export interface FieldShape {
  type: FieldType;
  constraints?: { min?: number; max?: number; maxLength?: number; pattern?: string };
  enum?: (string | number)[];
  fields?: ModelField[];
  items?: FieldShape;
  model?: { id: string; version?: number };
}

export interface ModelField extends FieldShape {
  name: string;
  description?: string;
  required?: boolean;
  default?: unknown;
  unit?: string;
  staleAfterSeconds?: number;
}

export interface Model {
  id: string;
  name: string;
  description: string | null;
  labels: string[];
  fields: ModelField[];
  version: number;
  createdAt: string;
  createdBy: string | null;
  updatedAt: string;
  updatedBy: string | null;
}

export interface ModelContent {
  name: string;
  description: string | null;
  labels: string[];
  fields: ModelField[];
}

const params = (id: string) => ({ header: orgHeader(), path: { id } });

export async function listModels(query: ModelListQuery) {
  return unwrap(await api.GET('/api/v1/engine/models', { params: { header: orgHeader(), query } }));
}

export async function getModel(id: string): Promise<Model> {
  return unwrap(await api.GET('/api/v1/engine/models/{id}', { params: params(id) })).data as Model;
}

export async function createModel(body: ModelContent): Promise<Model> {
  const result = await api.POST('/api/v1/engine/models', {
    params: { header: orgHeader() },
    body: body as never,
  });
  return unwrap(result).data as Model;
}

export async function saveModel(
  id: string,
  body: ModelContent & { version: number },
  acknowledgeBreaking: boolean,
) {
  const result = await api.PUT('/api/v1/engine/models/{id}', {
    params: { ...params(id), query: acknowledgeBreaking ? { acknowledgeBreaking: true } : {} },
    body: body as never,
  });
  return unwrap(result).data as Model;
}

export async function deleteModel(id: string, acknowledgeBreaking: boolean, force = false) {
  const result = await api.DELETE('/api/v1/engine/models/{id}', {
    params: {
      ...params(id),
      query: {
        ...(acknowledgeBreaking ? { acknowledgeBreaking: true } : {}),
        ...(force ? { force: true } : {}),
      },
    },
  });
  unwrap(result);
}

export async function cloneModel(id: string, name: string): Promise<Model> {
  return unwrap(await api.POST('/api/v1/engine/models/{id}/clone', { params: params(id), body: { name } }))
    .data as Model;
}

export async function listVersions(id: string, offset: number, limit = 25) {
  return unwrap(
    await api.GET('/api/v1/engine/models/{id}/versions', {
      params: { ...params(id), query: { limit, offset } },
    }),
  );
}

export async function getVersion(id: string, version: number) {
  const result = await api.GET('/api/v1/engine/models/{id}/versions/{version}', {
    params: { header: orgHeader(), path: { id, version } },
  });
  return unwrap(result).data as ModelVersion & { snapshot: ModelContent };
}

export async function diffVersions(id: string, version: number, against: number): Promise<VersionDiff> {
  const result = await api.GET('/api/v1/engine/models/{id}/versions/{version}/diff', {
    params: { header: orgHeader(), path: { id, version }, query: { against } },
  });
  return unwrap(result).data;
}

export async function revertModel(id: string, version: number, acknowledgeBreaking: boolean): Promise<Model> {
  // The revert route takes `acknowledgeBreaking` like PUT; the shared version routes do not declare it.
  const query = acknowledgeBreaking ? { acknowledgeBreaking: 'true' } : {};
  const result = await api.POST('/api/v1/engine/models/{id}/versions/{version}/revert', {
    params: { header: orgHeader(), path: { id, version }, query } as never,
  });
  return unwrap(result).data as Model;
}

export async function validateValue(id: string, value: unknown) {
  const result = await api.POST('/api/v1/engine/models/{id}/validate', {
    params: params(id),
    body: { value },
  });
  return unwrap(result).data;
}

export async function listBindings(id: string): Promise<ModelBinding[]> {
  return unwrap(await api.GET('/api/v1/engine/models/{id}/bindings', { params: params(id) })).data;
}

export async function bindModel(id: string, topicPrefix: string, mode: 'normal' | 'strict') {
  const result = await api.POST('/api/v1/engine/models/{id}/bindings', {
    params: params(id),
    body: { topicPrefix, mode },
  });
  return unwrap(result).data;
}

export async function unbindModel(id: string, bindingId: string) {
  const result = await api.DELETE('/api/v1/engine/models/{id}/bindings/{bindingId}', {
    params: { header: orgHeader(), path: { id, bindingId } },
  });
  unwrap(result);
}
