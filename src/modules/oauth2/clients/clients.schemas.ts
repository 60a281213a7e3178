import { type Static, Type } from 'typebox';
import { listQuerySchema, PaginationSchema } from '../../../platform/list-query.js';
import { Timestamp } from '../../../platform/schemas.js';

const ClientTypeSchema = Type.Union([Type.Literal('confidential'), Type.Literal('public')], {
  description: 'Fixed at creation. Public clients have no secret and must use PKCE.',
});
const GrantTypeSchema = Type.Union([
  Type.Literal('authorization_code'),
  Type.Literal('client_credentials'),
  Type.Literal('refresh_token'),
]);
const ClientStatus = Type.Union([Type.Literal('active'), Type.Literal('disabled')]);

export const Client = Type.Object(
  {
    id: Type.String({ format: 'uuid', description: 'Internal id, used in the paths of this API.' }),
    clientId: Type.String({ description: 'The OAuth2 client_id (mrd_ci_...).' }),
    name: Type.String({
      description: 'Application name, shown on the consent screen (1 to 100 characters).',
    }),
    description: Type.String({ description: 'At most 500 characters; shown on the consent screen.' }),
    clientType: ClientTypeSchema,
    grantTypes: Type.Array(GrantTypeSchema, { description: 'Fixed at creation.' }),
    responseTypes: Type.Array(Type.Literal('code'), { description: 'Derived from grantTypes; fixed.' }),
    redirectUris: Type.Array(Type.String()),
    allowedScopes: Type.Array(Type.String()),
    actingUserId: Type.Union([Type.String(), Type.Null()], {
      description: 'Client credentials: the user the client acts as; null means the user who created it.',
    }),
    organizationIds: Type.Array(Type.String({ format: 'uuid' }), {
      description:
        'The organizations the client may act in: its tokens are refused (422 missing_organization) in every ' +
        "other, whatever its user could reach; within them, the user's own memberships and role still apply.",
    }),
    status: ClientStatus,
    createdAt: Timestamp,
    createdBy: Type.Union([Type.String(), Type.Null()]),
    updatedAt: Timestamp,
    updatedBy: Type.Union([Type.String(), Type.Null()]),
  },
  { $id: 'OAuth2Client' },
);
export type Client = Static<typeof Client>;

export const RegisteredClient = Type.Intersect([
  Client,
  Type.Object({
    clientSecret: Type.Optional(
      Type.String({
        description: 'Confidential clients only: shown once, never retrievable again (mrd_cs_...).',
      }),
    ),
  }),
]);

const editable = {
  name: Type.String({ minLength: 1, maxLength: 100 }),
  description: Type.String({ maxLength: 500 }),
  redirectUris: Type.Array(Type.String(), {
    description:
      'Required with authorization_code; matched exactly. https://, or http:// on localhost, 127.0.0.1 or [::1].',
  }),
  allowedScopes: Type.Array(Type.String(), { description: 'The most the client may request.' }),
  actingUserId: Type.Union([Type.String(), Type.Null()], {
    description: 'Only for client_credentials clients; must name an existing user.',
  }),
  organizationIds: Type.Array(Type.String(), {
    description:
      'Organizations the client may act in (at least one). Default at registration: the organization named ' +
      'by X-Organization-ID. Organizations created later are not added.',
  }),
};

export const RegisterClientBody = Type.Object(
  {
    name: editable.name,
    description: Type.Optional(editable.description),
    clientType: ClientTypeSchema,
    grantTypes: Type.Array(GrantTypeSchema, {
      description:
        'client_credentials: confidential only. refresh_token is added automatically with authorization_code for confidential clients.',
    }),
    redirectUris: Type.Optional(editable.redirectUris),
    allowedScopes: editable.allowedScopes,
    actingUserId: Type.Optional(editable.actingUserId),
    organizationIds: Type.Optional(editable.organizationIds),
  },
  // Unknown and server-managed fields are refused by the client rules with a message naming them.
  { additionalProperties: true },
);

export const UpdateClientBody = Type.Object(
  {
    name: Type.Optional(editable.name),
    description: Type.Optional(editable.description),
    redirectUris: Type.Optional(editable.redirectUris),
    allowedScopes: Type.Optional(editable.allowedScopes),
    actingUserId: Type.Optional(editable.actingUserId),
    organizationIds: Type.Optional(editable.organizationIds),
  },
  {
    additionalProperties: true,
    minProperties: 1,
    description:
      'Only these fields are editable; clientType, grantTypes and responseTypes are refused (400).',
  },
);

export const ListClientsQuery = listQuerySchema(['name', 'createdAt', 'updatedAt'], {
  status: Type.Optional(
    Type.Union([Type.Literal('all'), Type.Literal('active'), Type.Literal('disabled')], {
      description: 'Default: all.',
    }),
  ),
});
export type ListClientsQuery = Static<typeof ListClientsQuery>;

export const ClientList = Type.Object({ data: Type.Array(Client), pagination: PaginationSchema });
