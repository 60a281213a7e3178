import type { paths } from './schema';

type Json<T> = T extends { content: { 'application/json': infer B } } ? B : never;
type DataOf<T> = Json<T> extends { data: infer D } ? D : never;

/** The signed-in session: user, organizations, CSRF token. */
export type SessionInfo = DataOf<paths['/api/v1/auth/session']['get']['responses'][200]>;
export type SessionUser = SessionInfo['user'];
export type SessionOrganization = SessionInfo['organizations'][number];

/** An OAuth2 client as the API returns it. */
export type OAuth2Client = DataOf<paths['/api/v1/oauth2/clients/{id}']['get']['responses'][200]>;
export type RegisteredClient = DataOf<paths['/api/v1/oauth2/clients']['post']['responses'][201]>;
export type RegisterClientBody = Json<NonNullable<paths['/api/v1/oauth2/clients']['post']['requestBody']>>;
export type UpdateClientBody = Json<
  NonNullable<paths['/api/v1/oauth2/clients/{id}']['patch']['requestBody']>
>;
export type ListClientsQuery = NonNullable<paths['/api/v1/oauth2/clients']['get']['parameters']['query']>;
export type ClientType = OAuth2Client['clientType'];
export type GrantType = OAuth2Client['grantTypes'][number];

/** A personal access token as listed; `CreatedPat` carries the value, once. */
export type Pat = Json<paths['/api/v1/oauth2/tokens']['get']['responses'][200]>['data'][number];
export type CreatedPat = DataOf<paths['/api/v1/oauth2/tokens']['post']['responses'][201]>;
export type CreatePatBody = Json<NonNullable<paths['/api/v1/oauth2/tokens']['post']['requestBody']>>;

/** A user from the admin list (acting-user picker, created-by names). */
export type AdminUser = Json<paths['/api/v1/admin/users']['get']['responses'][200]>['data'][number];
