import { type Static, Type } from 'typebox';
import { listQuerySchema, PaginationSchema } from '../../platform/list-query.js';
import { Timestamp } from '../../platform/schemas.js';

export const OrganizationRole = Type.Union(
  [Type.Literal('Owner'), Type.Literal('Admin'), Type.Literal('Editor'), Type.Literal('Viewer')],
  { $id: 'OrganizationRole' },
);

export const Organization = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    name: Type.String(),
    status: Type.Union([Type.Literal('active'), Type.Literal('suspended')]),
    role: Type.Union([OrganizationRole, Type.Null()], {
      description: 'Your role in it; null when you are not a member.',
    }),
    createdAt: Timestamp,
    createdBy: Type.Union([Type.String(), Type.Null()]),
    updatedAt: Timestamp,
    updatedBy: Type.Union([Type.String(), Type.Null()]),
  },
  { $id: 'Organization' },
);
export type Organization = Static<typeof Organization>;

const Name = Type.String({ minLength: 1, maxLength: 100 });

export const CreateOrganizationBody = Type.Object(
  {
    name: Name,
    ownerUserId: Type.Optional(Type.String({ format: 'uuid', description: 'Default: you.' })),
  },
  { additionalProperties: false },
);
export type CreateOrganizationBody = Static<typeof CreateOrganizationBody>;

export const UpdateOrganizationBody = Type.Object({ name: Name }, { additionalProperties: false });

export const ListOrganizationsQuery = listQuerySchema(['name', 'createdAt', 'updatedAt'], {
  status: Type.Optional(Type.Union([Type.Literal('active'), Type.Literal('suspended'), Type.Literal('all')])),
});
export type ListOrganizationsQuery = Static<typeof ListOrganizationsQuery>;

export const OrganizationList = Type.Object({ data: Type.Array(Organization), pagination: PaginationSchema });

export const Member = Type.Object({
  userId: Type.String({ format: 'uuid' }),
  email: Type.String(),
  displayName: Type.String(),
  role: OrganizationRole,
  userStatus: Type.Union([Type.Literal('active'), Type.Literal('deactivated')]),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type Member = Static<typeof Member>;

export const ListMembersQuery = listQuerySchema(['email', 'displayName', 'role', 'createdAt'], {});
export type ListMembersQuery = Static<typeof ListMembersQuery>;

export const MemberList = Type.Object({ data: Type.Array(Member), pagination: PaginationSchema });

export const MemberParams = Type.Object({
  id: Type.String({ format: 'uuid' }),
  userId: Type.String({ format: 'uuid' }),
});

export const PutMemberBody = Type.Object({ role: OrganizationRole }, { additionalProperties: false });
