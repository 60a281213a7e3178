import type { paths } from '../../api/schema';

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
