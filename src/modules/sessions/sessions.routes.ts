import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Kysely } from 'kysely';
import { Type } from 'typebox';
import { insufficientScope } from '../../platform/errors.js';
import { dataEnvelope, Timestamp } from '../../platform/schemas.js';
import type { Database } from '../../storage/tables.js';
import { OrganizationRole } from '../organizations/organizations.schemas.js';
import { SESSION_COOKIE, type SessionsService, setSessionCookie } from './sessions.service.js';

const tags = ['Sessions'];

const LoginBody = Type.Object(
  {
    email: Type.String({ minLength: 1, maxLength: 254 }),
    password: Type.String({ minLength: 1, maxLength: 256 }),
  },
  { additionalProperties: false },
);

const ChangePasswordBody = Type.Object(
  {
    currentPassword: Type.String({ minLength: 1, maxLength: 256 }),
    newPassword: Type.String({
      minLength: 1,
      maxLength: 256,
      description: 'At least 12 characters, hard to guess.',
    }),
  },
  { additionalProperties: false },
);

const SessionInfo = Type.Object({
  user: Type.Object({
    id: Type.String({ format: 'uuid' }),
    email: Type.String(),
    displayName: Type.String(),
    isSystemAdmin: Type.Boolean(),
  }),
  organizations: Type.Array(
    Type.Object({
      id: Type.String({ format: 'uuid' }),
      name: Type.String(),
      status: Type.Union([Type.Literal('active'), Type.Literal('suspended')]),
      role: OrganizationRole,
    }),
  ),
  csrfToken: Type.String({
    description: 'Send it as X-CSRF-Token on every POST, PUT, PATCH and DELETE made with the session cookie.',
  }),
  expiresAt: Timestamp,
});

/** What the console needs after sign-in: who you are, your organizations, your CSRF token. */
async function sessionInfo(db: Kysely<Database>, userId: string, csrfToken: string, expiresAt: number) {
  const user = await db
    .selectFrom('users')
    .select(['id', 'email', 'display_name', 'is_system_admin'])
    .where('id', '=', userId)
    .executeTakeFirstOrThrow();
  const organizations = await db
    .selectFrom('memberships as m')
    .innerJoin('organizations as o', 'o.id', 'm.organization_id')
    .select(['o.id', 'o.name', 'o.status', 'm.role'])
    .where('m.user_id', '=', userId)
    .orderBy('o.name')
    .execute();
  return {
    data: {
      user: {
        id: user.id,
        email: user.email,
        displayName: user.display_name,
        isSystemAdmin: user.is_system_admin === 1,
      },
      organizations,
      csrfToken,
      expiresAt: new Date(expiresAt).toISOString(),
    },
  };
}

/** `/api/v1/auth`: console sign-in and sign-out. These precede the choice of organization, so need no X-Organization-ID. */
export const sessionsRoutes: FastifyPluginAsyncTypebox<{
  sessions: SessionsService;
  db: Kysely<Database>;
  secureCookies: boolean;
}> = async (app, { sessions, db, secureCookies }) => {
  app.post(
    '/login',
    {
      config: { access: { public: true } },
      schema: {
        tags,
        summary: 'Sign in to the console',
        description:
          'Sets the HttpOnly session cookie. Failed attempts are rate limited per account and address (429 with Retry-After).',
        body: LoginBody,
        response: {
          200: dataEnvelope(SessionInfo),
          401: { $ref: 'UnauthorizedBody#' },
          429: { $ref: 'ErrorBody#' },
        },
      },
    },
    async (request, reply) => {
      const session = await sessions.login(request.body.email, request.body.password, request);
      setSessionCookie(reply, session, secureCookies);
      reply.header('cache-control', 'no-store');
      return sessionInfo(db, session.userId, session.csrfToken, session.expiresAt);
    },
  );

  app.get(
    '/session',
    {
      config: { access: { scope: null, organization: false } },
      schema: { tags, summary: 'The current console session', response: { 200: dataEnvelope(SessionInfo) } },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      const principal = request.principal!;
      return sessionInfo(db, principal.userId, principal.csrfToken ?? '', principal.expiresAt ?? 0);
    },
  );

  app.post(
    '/password',
    {
      config: { access: { scope: null, organization: false } },
      schema: {
        tags,
        summary: 'Change your own password',
        description:
          'From a console session only (cookie and X-CSRF-Token). `currentPassword` must be right (400 naming it; ' +
          'wrong ones are rate limited as sign-ins are, 429 with Retry-After); `newPassword` passes the password ' +
          "policy (400 naming the rule). Ends the user's other sessions, keeps this one; recorded in the audit log.",
        body: ChangePasswordBody,
        response: {
          204: Type.Null(),
          400: { $ref: 'ErrorBody#' },
          403: { $ref: 'ErrorBody#' },
          429: { $ref: 'ErrorBody#' },
        },
      },
    },
    async (request, reply) => {
      const principal = request.principal!;
      if (principal.credential !== 'session')
        throw insufficientScope('a console session (a token cannot change a password)');
      await sessions.changePassword(principal, request.body, String(request.id));
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/logout',
    {
      config: { access: { scope: null, organization: false } },
      schema: {
        tags,
        summary: 'Sign out',
        description: 'Ends the session named by the cookie.',
        response: { 204: Type.Null() },
      },
    },
    async (request, reply) => {
      const cookie = request.cookies[SESSION_COOKIE];
      if (cookie) await sessions.logout(cookie);
      reply.clearCookie(SESSION_COOKIE, { path: '/' });
      return reply.code(204).send(null);
    },
  );
};
