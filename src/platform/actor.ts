import type { FastifyRequest } from 'fastify';

/** Who performs a change, for created/updated-by columns and the audit log. */
export interface Actor {
  userId: string | null;
  clientId?: string | null;
  requestId?: string | null;
}

/** The actor of an authenticated request: the user, the OAuth2 client it came through, the request id. */
export function actorOf(request: FastifyRequest): Actor {
  return {
    userId: request.principal?.userId ?? null,
    clientId: request.principal?.clientId ?? null,
    requestId: String(request.id),
  };
}
