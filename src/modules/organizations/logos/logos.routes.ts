import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { errorResponse, IdParams } from '../../../platform/schemas.js';
import { callerOf } from '../organizations.routes.js';
import { LOGO_MAX_BYTES, LOGO_MAX_PIXELS, LOGO_MAX_SIDE, type LogosService } from './logos.service.js';

const tags = ['Organizations'];
const IMAGE_TYPES = ['image/png', 'image/jpeg', 'image/webp', 'image/svg+xml', 'application/octet-stream'];

/** `/api/v1/organizations/{id}/logo`: upload, serve and delete an organization's logo. */
export const logosRoutes: FastifyPluginAsyncTypebox<{ logos: LogosService }> = async (app, { logos }) => {
  // The raw bytes; what they are is decided by their signature, never by this header. SVG is parsed too,
  // so that it is refused with a clear 400 rather than an unsupported media type.
  app.addContentTypeParser(
    IMAGE_TYPES,
    { parseAs: 'buffer', bodyLimit: LOGO_MAX_BYTES },
    (_req, body, done) => done(null, body),
  );

  app.put(
    '/:id/logo',
    {
      bodyLimit: LOGO_MAX_BYTES,
      config: { access: { scope: 'organizations:write' } },
      schema: {
        tags,
        summary: 'Upload the organization logo',
        description: `The raw image as the body: PNG, JPEG or WebP, at most ${LOGO_MAX_BYTES} bytes (512 KiB), recognised by its bytes, not its name or declared type, at most ${LOGO_MAX_SIDE} pixels a side and ${LOGO_MAX_PIXELS} pixels in all (1024x1024) as its header declares (400 naming the limit, and for a header that is truncated or disagrees with the file). SVG is refused. Replaces any previous logo. Owners of the organization named by X-Organization-ID; System Administrators any.`,
        params: IdParams,
        consumes: ['image/png', 'image/jpeg', 'image/webp'],
        // No type: the raw bytes are checked by their signature in the service, not by the validator.
        body: Type.Unsafe<Buffer>({ description: 'The image bytes (binary).' }),
        response: {
          200: Type.Object({
            data: Type.Object({
              contentType: Type.String(),
              size: Type.Integer(),
              etag: Type.String(),
            }),
          }),
          413: errorResponse('The image is larger than 512 KiB.'),
        },
      },
    },
    async (request) => {
      const logo = await logos.put(callerOf(request), request.params.id, request.body);
      return { data: { contentType: logo.contentType, size: logo.bytes.length, etag: logo.etag } };
    },
  );

  app.get(
    '/:id/logo',
    {
      config: { access: { scope: 'organizations:read' } },
      schema: {
        tags,
        summary: 'Download the organization logo',
        description:
          'The image with a fixed Content-Type, an ETag (send it as If-None-Match: 304 while unchanged), Cache-Control and X-Content-Type-Options: nosniff.',
        params: IdParams,
        response: {
          200: {
            description: 'The image bytes.',
            content: {
              'image/png': { schema: Type.String({ format: 'binary' }) },
              'image/jpeg': { schema: Type.String({ format: 'binary' }) },
              'image/webp': { schema: Type.String({ format: 'binary' }) },
            },
          },
          304: { description: 'Not modified (If-None-Match matched the ETag).', type: 'null' },
          404: errorResponse('The organization has no logo, or is not yours.'),
        },
      },
    },
    async (request, reply) => {
      const logo = await logos.get(callerOf(request), request.params.id);
      reply
        .header('etag', logo.etag)
        .header('cache-control', 'private, no-cache')
        .header('last-modified', new Date(logo.updatedAt).toUTCString())
        .header('x-content-type-options', 'nosniff')
        .header('content-security-policy', "default-src 'none'; sandbox");
      const ifNoneMatch = request.headers['if-none-match'];
      if (ifNoneMatch?.split(',').some((tag) => tag.trim() === logo.etag || tag.trim() === '*')) {
        return reply.code(304).send(null);
      }
      return reply.header('content-type', logo.contentType).send(logo.bytes);
    },
  );

  app.delete(
    '/:id/logo',
    {
      config: { access: { scope: 'organizations:write' } },
      schema: {
        tags,
        summary: 'Delete the organization logo',
        params: IdParams,
        response: { 204: Type.Null() },
      },
    },
    async (request, reply) => {
      await logos.delete(callerOf(request), request.params.id);
      return reply.code(204).send(null);
    },
  );
};
