import { type Static, Type } from 'typebox';
import { listQuerySchema, PaginationSchema } from '../../platform/list-query.js';
import { Timestamp } from '../../platform/schemas.js';

export const UserStatus = Type.Union([Type.Literal('active'), Type.Literal('deactivated')]);

export const User = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    email: Type.String(),
    displayName: Type.String(),
    status: UserStatus,
    isSystemAdmin: Type.Boolean(),
    deleted: Type.Boolean(),
    deletedAt: Type.Union([Timestamp, Type.Null()]),
    lastLoginAt: Type.Union([Timestamp, Type.Null()]),
    createdAt: Timestamp,
    createdBy: Type.Union([Type.String(), Type.Null()]),
    updatedAt: Timestamp,
    updatedBy: Type.Union([Type.String(), Type.Null()]),
  },
  { $id: 'User' },
);
export type User = Static<typeof User>;

const Email = Type.String({
  format: 'email',
  maxLength: 254,
  description: 'Unique, compared case-insensitively.',
});
const DisplayName = Type.String({ minLength: 1, maxLength: 100 });
const Password = Type.String({
  minLength: 12,
  maxLength: 256,
  description:
    'At least 12 characters, not built from the e-mail or name, and strong enough by the zxcvbn estimator (strength 3 of 4); a 400 says why not.',
});

export const CreateUserBody = Type.Object(
  {
    email: Email,
    displayName: DisplayName,
    password: Password,
    isSystemAdmin: Type.Optional(Type.Boolean({ default: false })),
    status: Type.Optional(UserStatus),
  },
  { additionalProperties: false },
);
export type CreateUserBody = Static<typeof CreateUserBody>;

export const UpdateUserBody = Type.Object(
  {
    email: Type.Optional(Email),
    displayName: Type.Optional(DisplayName),
    password: Type.Optional(Password),
    isSystemAdmin: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type UpdateUserBody = Static<typeof UpdateUserBody>;

export const UserStatusBody = Type.Object({ status: UserStatus }, { additionalProperties: false });

export const ListUsersQuery = listQuerySchema(['email', 'displayName', 'createdAt', 'updatedAt'], {
  status: Type.Optional(
    Type.Union(
      [Type.Literal('active'), Type.Literal('deactivated'), Type.Literal('deleted'), Type.Literal('all')],
      { description: 'Default: every user that is not deleted.' },
    ),
  ),
});
export type ListUsersQuery = Static<typeof ListUsersQuery>;

export const UserList = Type.Object({ data: Type.Array(User), pagination: PaginationSchema });
