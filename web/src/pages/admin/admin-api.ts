import type { paths } from '../../api/schema';
import type { SessionInfo, SessionOrganization } from '../../api/types';

type Json<T> = T extends { content: { 'application/json': infer B } } ? B : never;
type DataOf<T> = Json<T> extends { data: infer D } ? D : never;

export type OrganizationSettings = DataOf<paths['/api/v1/organizations/settings']['get']['responses'][200]>;
export type PatchSettingsBody = Json<
  NonNullable<paths['/api/v1/organizations/settings']['patch']['requestBody']>
>;
export type MaintenanceState = OrganizationSettings['maintenance'];
export type ChangeEntry = Json<
  paths['/api/v1/organizations/settings/history']['get']['responses'][200]
>['data'][number];
export type AuditQuery = NonNullable<paths['/api/v1/organizations/audit-log']['get']['parameters']['query']>;
export type Organization = DataOf<paths['/api/v1/organizations/{id}']['get']['responses'][200]>;
export type Member = Json<
  paths['/api/v1/organizations/{id}/members']['get']['responses'][200]
>['data'][number];
export type Role = Member['role'];
export type User = DataOf<paths['/api/v1/admin/users/{id}']['get']['responses'][200]>;

export const ROLES: Role[] = ['Owner', 'Admin', 'Editor', 'Viewer'];

/** What the signed-in person may do in the current organization; the server enforces the same. */
export interface Abilities {
  /** System Administrator: every organization and user. */
  system: boolean;
  /** Owner (or System Administrator): settings, maintenance, logo, rename. */
  manageOrganization: boolean;
  /** Admin or Owner: members and the audit log. */
  manageMembers: boolean;
}

export function abilitiesOf(
  session: SessionInfo | null | undefined,
  organization: SessionOrganization | null,
): Abilities {
  const system = session?.user.isSystemAdmin ?? false;
  const role = organization?.role ?? null;
  return {
    system,
    manageOrganization: system || role === 'Owner',
    manageMembers: system || role === 'Owner' || role === 'Admin',
  };
}

/** Announces a new or deleted logo so the header shows it without a reload. */
export const LOGO_CHANGED = 'meridian:logo-changed';
