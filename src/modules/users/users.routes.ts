import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { actorOf } from '../../platform/actor.js';
import { dataEnvelope, errorResponse, IdParams } from '../../platform/schemas.js';
import {
  CreateUserBody,
  ListUsersQuery,
  UpdateUserBody,
  User,
  UserList,
  UserStatusBody,
} from './users.schemas.js';
import { toUser, type UsersService } from './users.service.js';

const read = { access: { scope: 'users:read', systemAdmin: true } };
const write = { access: { scope: 'users:write', systemAdmin: true } };
const tags = ['Users'];

/** `/api/v1/admin/users`: user management for System Administrators. */
export const usersRoutes: FastifyPluginAsyncTypebox<{ users: UsersService }> = async (app, { users }) => {
  app.get(
    '',
    {
      config: read,
      schema: { tags, summary: 'List users', querystring: ListUsersQuery, response: { 200: UserList } },
    },
    async (request) => users.list(request.query),
  );

  app.post(
    '',
    {
      config: write,
      schema: {
        tags,
        summary: 'Create a user',
        body: CreateUserBody,
        response: { 201: dataEnvelope(User), 409: errorResponse('The email is taken.') },
      },
    },
    async (request, reply) => {
      const row = await users.create(request.body, actorOf(request));
      return reply.code(201).send({ data: toUser(row) });
    },
  );

  app.get(
    '/:id',
    {
      config: read,
      schema: { tags, summary: 'View a user', params: IdParams, response: { 200: dataEnvelope(User) } },
    },
    async (request) => ({ data: toUser(await users.get(request.params.id)) }),
  );

  app.patch(
    '/:id',
    {
      config: write,
      schema: {
        tags,
        summary: 'Update a user',
        description: "Changing the password ends the user's console sessions.",
        params: IdParams,
        body: UpdateUserBody,
        response: {
          200: dataEnvelope(User),
          409: errorResponse('The email is taken, or the change would leave no active System Administrator.'),
        },
      },
    },
    async (request) => ({
      data: toUser(await users.update(request.params.id, request.body, actorOf(request))),
    }),
  );

  app.put(
    '/:id/status',
    {
      config: write,
      schema: {
        tags,
        summary: 'Activate or deactivate a user',
        description:
          "A deactivated user's sessions end and every token and PAT of theirs stops working at once.",
        params: IdParams,
        body: UserStatusBody,
        response: {
          200: dataEnvelope(User),
          409: errorResponse('The change would leave no active System Administrator.'),
        },
      },
    },
    async (request) => ({
      data: toUser(await users.setStatus(request.params.id, request.body.status, actorOf(request))),
    }),
  );

  app.delete(
    '/:id',
    {
      config: write,
      schema: {
        tags,
        summary: 'Delete a user',
        description: 'Soft delete: the user can no longer sign in or use tokens, and can be restored.',
        params: IdParams,
        response: {
          204: Type.Null(),
          409: errorResponse('The change would leave no active System Administrator.'),
        },
      },
    },
    async (request, reply) => {
      await users.remove(request.params.id, actorOf(request));
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/:id/restore',
    {
      config: write,
      schema: {
        tags,
        summary: 'Restore a deleted user',
        params: IdParams,
        response: { 200: dataEnvelope(User) },
      },
    },
    async (request) => ({ data: toUser(await users.restore(request.params.id, actorOf(request))) }),
  );
};
