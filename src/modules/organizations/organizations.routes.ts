import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { actorOf } from '../../platform/actor.js';
import { dataEnvelope, errorResponse, IdParams } from '../../platform/schemas.js';
import {
  CreateOrganizationBody,
  ListMembersQuery,
  ListOrganizationsQuery,
  MemberList,
  MemberParams,
  Organization,
  OrganizationList,
  PutMemberBody,
  UpdateOrganizationBody,
} from './organizations.schemas.js';
import type { Caller, OrganizationsService } from './organizations.service.js';

const tags = ['Organizations'];
const OrganizationData = dataEnvelope(Organization);

/** The caller of an organizations route as its rules see them. */
export function callerOf(request: FastifyRequest): Caller {
  return {
    ...actorOf(request),
    userId: request.principal!.userId,
    isSystemAdmin: request.isSystemAdmin,
    organization: request.organization!,
  };
}

/** `/api/v1/organizations`: organizations, their status and their members. */
export const organizationsRoutes: FastifyPluginAsyncTypebox<{ organizations: OrganizationsService }> = async (
  app,
  { organizations },
) => {
  app.get(
    '',
    {
      config: { access: { scope: 'organizations:read' } },
      schema: {
        tags,
        summary: 'List organizations',
        description: 'Your organizations; a System Administrator sees all.',
        querystring: ListOrganizationsQuery,
        response: { 200: OrganizationList },
      },
    },
    async (request) => organizations.list(callerOf(request), request.query),
  );

  app.post(
    '',
    {
      config: { access: { scope: 'organizations:write', systemAdmin: true } },
      schema: {
        tags,
        summary: 'Create an organization',
        body: CreateOrganizationBody,
        response: { 201: OrganizationData },
      },
    },
    async (request, reply) =>
      reply.code(201).send({ data: await organizations.create(callerOf(request), request.body) }),
  );

  app.get(
    '/:id',
    {
      config: { access: { scope: 'organizations:read' } },
      schema: {
        tags,
        summary: 'View an organization',
        params: IdParams,
        response: { 200: OrganizationData },
      },
    },
    async (request) => ({ data: await organizations.get(callerOf(request), request.params.id) }),
  );

  app.patch(
    '/:id',
    {
      config: { access: { scope: 'organizations:write' } },
      schema: {
        tags,
        summary: 'Update an organization',
        description: 'Owners update the organization named by X-Organization-ID; System Administrators any.',
        params: IdParams,
        body: UpdateOrganizationBody,
        response: { 200: OrganizationData },
      },
    },
    async (request) => ({
      data: await organizations.rename(callerOf(request), request.params.id, request.body.name),
    }),
  );

  app.delete(
    '/:id',
    {
      config: { access: { scope: 'organizations:write', systemAdmin: true } },
      schema: {
        tags,
        summary: 'Delete an organization',
        description:
          'Permanent; only a suspended organization (suspending it is the confirmation). Deletes its memberships and its whole unified namespace: topics, latest values, history, violations, schemas and bindings; a large history takes a while. An interrupted delete is completed by repeating it. The audit log keeps its entries.',
        params: IdParams,
        response: {
          204: Type.Null(),
          409: errorResponse('The organization is not suspended.'),
        },
      },
    },
    async (request, reply) => {
      await organizations.delete(callerOf(request), request.params.id);
      return reply.code(204).send(null);
    },
  );

  for (const [action, status] of [
    ['suspend', 'suspended'],
    ['activate', 'active'],
  ] as const) {
    app.post(
      `/:id/${action}`,
      {
        config: { access: { scope: 'organizations:write', systemAdmin: true } },
        schema: {
          tags,
          summary: action === 'suspend' ? 'Suspend an organization' : 'Activate an organization',
          description:
            action === 'suspend'
              ? 'Requests of its members in it are answered 422 until it is activated again.'
              : undefined,
          params: IdParams,
          response: { 200: OrganizationData },
        },
      },
      async (request) => ({
        data: await organizations.setStatus(callerOf(request), request.params.id, status),
      }),
    );
  }

  app.get(
    '/:id/members',
    {
      config: { access: { scope: 'users:read' } },
      schema: {
        tags,
        summary: 'List members',
        params: IdParams,
        querystring: ListMembersQuery,
        response: { 200: MemberList },
      },
    },
    async (request) => organizations.listMembers(callerOf(request), request.params.id, request.query),
  );

  app.put(
    '/:id/members/:userId',
    {
      config: { access: { scope: 'users:write' } },
      schema: {
        tags,
        summary: 'Add a member or change their role',
        description: 'Only Owners grant or take away the Owner role; the last Owner cannot be demoted.',
        params: MemberParams,
        body: PutMemberBody,
        response: { 204: Type.Null(), 409: errorResponse('The last Owner cannot be demoted.') },
      },
    },
    async (request, reply) => {
      await organizations.putMember(
        callerOf(request),
        request.params.id,
        request.params.userId,
        request.body.role,
      );
      return reply.code(204).send(null);
    },
  );

  app.delete(
    '/:id/members/:userId',
    {
      config: { access: { scope: 'users:write' } },
      schema: {
        tags,
        summary: 'Remove a member',
        params: MemberParams,
        response: { 204: Type.Null(), 409: errorResponse('The last Owner cannot be removed.') },
      },
    },
    async (request, reply) => {
      await organizations.removeMember(callerOf(request), request.params.id, request.params.userId);
      return reply.code(204).send(null);
    },
  );
};
