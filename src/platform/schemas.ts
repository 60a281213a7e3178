import { Type } from 'typebox';

/** The body of every error except 401. */
export const ErrorBody = Type.Object(
  {
    error: Type.String({ description: 'Stable snake_case code, e.g. bad_request, not_found.' }),
    message: Type.String({ description: 'What went wrong, naming the field where one is at fault.' }),
    requestId: Type.Optional(
      Type.String({ description: 'Present on 500: quote it when reporting the failure.' }),
    ),
  },
  { $id: 'ErrorBody' },
);

/** The body of a 401 (no `error` member, as the spec's table says). */
export const UnauthorizedBody = Type.Object({ message: Type.String() }, { $id: 'UnauthorizedBody' });

/** A UUID path parameter named `id`. */
export const IdParams = Type.Object({ id: Type.String({ format: 'uuid', description: 'Resource id.' }) });

/** ISO 8601 timestamp in API responses. */
export const Timestamp = Type.String({ format: 'date-time' });

/** Converts a stored epoch-milliseconds value to an ISO 8601 string. */
export function isoTime(ms: number): string;
export function isoTime(ms: number | null): string | null;
export function isoTime(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}

/** `{ data: T }`: the envelope of every successful JSON response. */
export function dataEnvelope<T extends Parameters<typeof Type.Object>[0][string]>(schema: T) {
  return Type.Object({ data: schema });
}

/** A documented error response of a route, beyond those the request contract adds by itself. */
export const errorResponse = (description: string) => ({ description, $ref: 'ErrorBody#' }) as const;
