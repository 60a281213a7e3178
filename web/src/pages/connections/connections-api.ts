import { api, orgHeader, unwrap } from '../../api/client';
import type { paths } from '../../api/schema';
import type { VersionChange, VersionSource } from '../../components/version-history';

type Json<T> = T extends { content: { 'application/json': infer B } } ? B : never;
type DataOf<T> = Json<T> extends { data: infer D } ? D : never;

export type Connection = DataOf<paths['/api/v1/connections/{id}']['get']['responses'][200]>;
export type Protocol = Json<paths['/api/v1/connections/protocols']['get']['responses'][200]>['data'][number];
export type ConnectorFunction = DataOf<
  paths['/api/v1/connections/{id}/functions/{functionId}']['get']['responses'][200]
>;
export type Runtime = DataOf<paths['/api/v1/connections/{id}/runtime']['get']['responses'][200]>;
export type ExecutionResult = DataOf<
  paths['/api/v1/connections/{id}/functions/{functionId}/execute']['post']['responses'][200]
>;
export type StateEvent = Json<
  paths['/api/v1/connections/state-history']['get']['responses'][200]
>['data'][number];
export type HealthSummary = DataOf<
  paths['/api/v1/connections/state-history/summary']['get']['responses'][200]
>['connections'][number];

/** A JSON Schema property as the protocols describe their config. */
export interface SchemaProperty {
  type?: string | string[];
  title?: string;
  enum?: unknown[];
  default?: unknown;
  description?: string;
  minimum?: number;
  maximum?: number;
  'x-secret'?: boolean;
}

export interface ObjectSchema {
  properties?: Record<string, SchemaProperty>;
  required?: string[];
}

/** A connection's versions for the shared history: list, the server's diff, revert. */
export function connectionVersions(id: string): VersionSource<Connection> {
  const params = (version: number) => ({ header: orgHeader(), path: { id, version } });
  return {
    async list(offset, limit) {
      return unwrap(
        await api.GET('/api/v1/connections/{id}/versions', {
          params: { header: orgHeader(), path: { id }, query: { offset, limit } },
        }),
      );
    },
    async diff(version, against) {
      const result = await api.GET('/api/v1/connections/{id}/versions/{version}/diff', {
        params: { ...params(version), query: { against } },
      });
      return unwrap(result).data.changes as VersionChange[];
    },
    async revert(version) {
      return unwrap(
        await api.POST('/api/v1/connections/{id}/versions/{version}/revert', { params: params(version) }),
      ).data;
    },
  };
}

/** A function's versions for the shared history. */
export function functionVersions(connectionId: string, functionId: string): VersionSource<ConnectorFunction> {
  const params = (version: number) => ({
    header: orgHeader(),
    path: { id: connectionId, functionId, version },
  });
  return {
    async list(offset, limit) {
      return unwrap(
        await api.GET('/api/v1/connections/{id}/functions/{functionId}/versions', {
          params: { header: orgHeader(), path: { id: connectionId, functionId }, query: { offset, limit } },
        }),
      );
    },
    async diff(version, against) {
      const result = await api.GET(
        '/api/v1/connections/{id}/functions/{functionId}/versions/{version}/diff',
        {
          params: { ...params(version), query: { against } },
        },
      );
      return unwrap(result).data.changes as VersionChange[];
    },
    async revert(version) {
      return unwrap(
        await api.POST('/api/v1/connections/{id}/functions/{functionId}/versions/{version}/revert', {
          params: params(version),
        }),
      ).data;
    },
  };
}
