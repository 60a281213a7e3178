import { Type } from 'typebox';
import { PaginationSchema } from '../../platform/list-query.js';
import { Timestamp } from '../../platform/schemas.js';

export const ChangeSummarySchema = Type.Object(
  {
    added: Type.Array(Type.String()),
    removed: Type.Array(Type.String()),
    changed: Type.Array(Type.String()),
  },
  { description: 'JSON pointers added, removed and changed against the previous version.' },
);

const versionFields = {
  version: Type.Integer({ minimum: 1 }),
  changeType: Type.Union([
    Type.Literal('create'),
    Type.Literal('update'),
    Type.Literal('revert'),
    Type.Literal('import'),
    Type.Literal('clone'),
  ]),
  summary: ChangeSummarySchema,
  revertedFrom: Type.Union([Type.Integer(), Type.Null()], { description: 'The version a revert restored.' }),
  createdAt: Timestamp,
  createdBy: Type.Union([Type.String(), Type.Null()], { description: 'The acting user.' }),
  createdByClient: Type.Union([Type.String(), Type.Null()], { description: 'The OAuth2 client, if any.' }),
};

export const VersionListItem = Type.Object(versionFields);
export const VersionList = Type.Object({ data: Type.Array(VersionListItem), pagination: PaginationSchema });
export const VersionDetail = Type.Object({
  data: Type.Object({ ...versionFields, snapshot: Type.Unknown({ description: 'The whole entity then.' }) }),
});

export const JsonChangeSchema = Type.Object({
  path: Type.String({ description: 'JSON pointer (RFC 6901) into the entity.' }),
  kind: Type.Union([Type.Literal('added'), Type.Literal('removed'), Type.Literal('changed')]),
  from: Type.Optional(Type.Unknown()),
  to: Type.Optional(Type.Unknown()),
});

export const VersionDiff = Type.Object({
  data: Type.Object({
    from: Type.Integer(),
    to: Type.Integer(),
    changes: Type.Array(JsonChangeSchema),
    summary: ChangeSummarySchema,
  }),
});

export const VersionNumber = Type.Integer({
  minimum: 1,
  maximum: 2_147_483_647,
  description: 'Version number.',
});

export const VersionParams = Type.Object({
  id: Type.String({ format: 'uuid', description: 'Resource id.' }),
  version: VersionNumber,
});

export const VersionListQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50, description: 'Page size.' })),
    offset: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 10_000_000, default: 0, description: 'Rows to skip.' }),
    ),
  },
  { additionalProperties: false },
);

export const DiffQuery = Type.Object(
  {
    against: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 2_147_483_647,
        description: 'The older side; default the version before.',
      }),
    ),
  },
  { additionalProperties: false },
);
