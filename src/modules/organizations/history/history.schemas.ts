import { type Static, Type } from 'typebox';
import { listQuerySchema, PaginationSchema } from '../../../platform/list-query.js';
import { Timestamp } from '../../../platform/schemas.js';

export const ChangeEntry = Type.Object(
  {
    id: Type.String(),
    at: Timestamp,
    actor: Type.Union(
      [
        Type.Object({
          userId: Type.Union([Type.String(), Type.Null()]),
          email: Type.Union([Type.String(), Type.Null()]),
          displayName: Type.Union([Type.String(), Type.Null()]),
          clientId: Type.Union([Type.String(), Type.Null()], {
            description: 'The OAuth2 client it came through.',
          }),
        }),
        Type.Null(),
      ],
      { description: 'Who made the change; null when the system did (an end time passing).' },
    ),
    action: Type.String({ description: 'e.g. settings.updated, maintenance.enabled, connection.updated.' }),
    targetType: Type.String(),
    targetId: Type.Union([Type.String(), Type.Null()]),
    reason: Type.Union([Type.String(), Type.Null()]),
    changes: Type.Array(
      Type.Object({
        path: Type.String({ description: 'JSON pointer of the changed value.' }),
        from: Type.Optional(Type.Unknown()),
        to: Type.Optional(Type.Unknown()),
      }),
      { description: 'Each changed path from and to; secrets show only as "[secret]".' },
    ),
    details: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()], {
      description: 'Other facts of entries that are not path changes (e.g. the role given to a member).',
    }),
  },
  {},
);
export type ChangeEntry = Static<typeof ChangeEntry>;

export const ChangeList = Type.Object({ data: Type.Array(ChangeEntry), pagination: PaginationSchema });

const range = {
  from: Type.Optional(Type.String({ format: 'date-time', description: 'Entries at or after.' })),
  to: Type.Optional(Type.String({ format: 'date-time', description: 'Entries before.' })),
};
const Action = Type.String({
  maxLength: 100,
  pattern: '^[a-z0-9_.-]+$',
  description: 'An action, or a prefix ending in "." (e.g. maintenance.).',
});

export const HistoryQuery = listQuerySchema(['at'], { ...range, action: Type.Optional(Action) });
export type HistoryQuery = Static<typeof HistoryQuery>;

export const AuditQuery = listQuerySchema(['at', 'action'], {
  ...range,
  action: Type.Optional(Action),
  targetType: Type.Optional(Type.String({ maxLength: 100, pattern: '^[a-z0-9_.-]+$' })),
  targetId: Type.Optional(Type.String({ maxLength: 200, pattern: '^[^\\u0000]*$' })),
  actorUserId: Type.Optional(Type.String({ format: 'uuid' })),
});
export type AuditQuery = Static<typeof AuditQuery>;
