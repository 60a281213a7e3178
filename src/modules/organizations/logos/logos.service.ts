import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Clock } from '../../../platform/clock.js';
import { badRequest, notFound } from '../../../platform/errors.js';
import type { Database } from '../../../storage/tables.js';
import { auditOrganization, type Caller } from '../organizations.service.js';
import { readImageDimensions } from './image-dimensions.js';
import { detectImageType, type LogoContentType } from './image-type.js';

/** Largest logo accepted. */
export const LOGO_MAX_BYTES = 512 * 1024;
/**
 * Widest and tallest logo accepted, in pixels: the console shows a logo at most a few hundred pixels
 * wide on a high-density screen, and a wordmark may be wide.
 */
export const LOGO_MAX_SIDE = 2048;
/**
 * Most pixels a logo may declare (1024x1024): what a browser allocates to decode it, 4 MiB at 4 bytes a
 * pixel, whatever the compressed size (a 512 KiB PNG can declare 30000x30000, 3.6 GB decoded).
 */
export const LOGO_MAX_PIXELS = 1024 * 1024;

export interface Logo {
  contentType: LogoContentType;
  bytes: Buffer;
  etag: string;
  updatedAt: number;
}

/**
 * Refuses a logo whose header cannot be read whole, or declares more than LOGO_MAX_SIDE pixels a side or
 * LOGO_MAX_PIXELS in all (a decompression bomb for every browser that shows it).
 */
function checkDimensions(body: Buffer, contentType: LogoContentType): void {
  const size = readImageDimensions(body, contentType);
  if ('problem' in size) throw badRequest(`the logo cannot be read: ${size.problem}`);
  const { width, height } = size;
  if (width > LOGO_MAX_SIDE || height > LOGO_MAX_SIDE || width * height > LOGO_MAX_PIXELS) {
    throw badRequest(
      `logo is ${width}x${height} pixels; at most ${LOGO_MAX_SIDE} pixels a side and ${LOGO_MAX_PIXELS} pixels in all (1024x1024)`,
    );
  }
}

/**
 * Organization logos: PNG, JPEG or WebP checked by their bytes, at most 512 KiB, 2048 pixels a side and
 * 1024x1024 pixels in all (read from the header); SVG refused.
 */
export class LogosService {
  constructor(private readonly deps: { db: Kysely<Database>; clock: Clock }) {}

  async put(caller: Caller, organizationId: string, body: unknown): Promise<Logo> {
    await this.assertVisible(caller, organizationId);
    if (!Buffer.isBuffer(body) || body.length === 0) {
      throw badRequest(
        'send the image as the raw request body (Content-Type image/png, image/jpeg or image/webp)',
      );
    }
    const contentType = detectImageType(body);
    if (!contentType) {
      throw badRequest('the logo must be a PNG, JPEG or WebP image (checked by its bytes); SVG is refused');
    }
    checkDimensions(body, contentType);
    const now = this.deps.clock.now();
    const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
    const row = {
      organization_id: organizationId,
      content_type: contentType,
      data: body.toString('base64'),
      size: body.length,
      etag,
      updated_at: now,
      updated_by: caller.userId,
    };
    await this.deps.db
      .insertInto('organization_logos')
      .values(row)
      .onConflict((oc) =>
        oc.column('organization_id').doUpdateSet({
          content_type: row.content_type,
          data: row.data,
          size: row.size,
          etag: row.etag,
          updated_at: row.updated_at,
          updated_by: row.updated_by,
        }),
      )
      .execute();
    await this.audit(caller, organizationId, 'organization.logo.updated', { contentType, size: body.length });
    return { contentType, bytes: body, etag, updatedAt: now };
  }

  async get(caller: Caller, organizationId: string): Promise<Logo> {
    await this.assertVisible(caller, organizationId);
    const row = await this.deps.db
      .selectFrom('organization_logos')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .executeTakeFirst();
    if (!row) throw notFound('logo');
    return {
      contentType: row.content_type,
      bytes: Buffer.from(row.data, 'base64'),
      etag: row.etag,
      updatedAt: Number(row.updated_at),
    };
  }

  async delete(caller: Caller, organizationId: string): Promise<void> {
    await this.assertVisible(caller, organizationId);
    const result = await this.deps.db
      .deleteFrom('organization_logos')
      .where('organization_id', '=', organizationId)
      .executeTakeFirst();
    if (Number(result.numDeletedRows) === 0) throw notFound('logo');
    await this.audit(caller, organizationId, 'organization.logo.deleted');
  }

  /** The organization named by X-Organization-ID; a System Administrator may name any existing one. */
  private async assertVisible(caller: Caller, organizationId: string): Promise<void> {
    if (caller.organization.id === organizationId) return;
    if (caller.isSystemAdmin) {
      const exists = await this.deps.db
        .selectFrom('organizations')
        .select('id')
        .where('id', '=', organizationId)
        .executeTakeFirst();
      if (exists) return;
    }
    throw notFound('organization');
  }

  private audit(caller: Caller, organizationId: string, action: string, details?: Record<string, unknown>) {
    return auditOrganization(this.deps.db, this.deps.clock.now(), caller, organizationId, action, details);
  }
}
