import { type Static, Type } from 'typebox';
import { listQuerySchema, PaginationSchema } from '../../platform/list-query.js';
import { Timestamp } from '../../platform/schemas.js';

/** The expiry choices of a personal access token, in days. */
export const PAT_EXPIRY_DAYS = [30, 90, 180, 365] as const;

export const PersonalAccessToken = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    name: Type.String(),
    scopes: Type.Array(Type.String()),
    status: Type.Union([Type.Literal('active'), Type.Literal('expired'), Type.Literal('revoked')]),
    createdAt: Timestamp,
    lastUsedAt: Type.Union([Timestamp, Type.Null()], { description: 'Updated at most once a minute.' }),
    expiresAt: Timestamp,
    revokedAt: Type.Union([Timestamp, Type.Null()]),
  },
  { $id: 'PersonalAccessToken' },
);
export type PersonalAccessToken = Static<typeof PersonalAccessToken>;

export const CreatedPersonalAccessToken = Type.Intersect([
  PersonalAccessToken,
  Type.Object({
    token: Type.String({ description: 'The token value (mrd_pat_...): shown once, stored only as a hash.' }),
  }),
]);

export const CreatePatBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 255 }),
    expiresInDays: Type.Optional(
      Type.Union(
        PAT_EXPIRY_DAYS.map((d) => Type.Literal(d)),
        { description: '30, 90 (default), 180 or 365 days.' },
      ),
    ),
    scopes: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
      minItems: 1,
      maxItems: 64,
      description: 'Scopes within what you may use in the organization named by X-Organization-ID.',
    }),
  },
  { additionalProperties: false },
);
export type CreatePatBody = Static<typeof CreatePatBody>;

export const ListPatsQuery = listQuerySchema(['name', 'createdAt', 'expiresAt', 'lastUsedAt'], {
  status: Type.Optional(
    Type.Union(
      [Type.Literal('all'), Type.Literal('active'), Type.Literal('expired'), Type.Literal('revoked')],
      { description: 'Default: all.' },
    ),
  ),
});
export type ListPatsQuery = Static<typeof ListPatsQuery>;

export const PatList = Type.Object({ data: Type.Array(PersonalAccessToken), pagination: PaginationSchema });
