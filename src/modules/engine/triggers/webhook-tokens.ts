import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../../../storage/tables.js';

const hashOf = (token: string) => createHash('sha256').update(token, 'utf8').digest();

/** The prefix that makes a webhook token recognisable in logs and secret scanners. */
export const WEBHOOK_TOKEN_PREFIX = 'mwh_';

/**
 * Webhook tokens: one per pipeline, 32 random bytes shown once at issue, stored as SHA-256 and compared
 * in constant time. Issuing again replaces the old token at once (rotation).
 */
export class WebhookTokens {
  constructor(private readonly db: Kysely<Database>) {}

  /** Issues (or replaces) the token of a pipeline; answers the token, never stored as such. */
  async issue(organizationId: string, pipelineId: string, userId: string | null, now: number) {
    const token = `${WEBHOOK_TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
    const row = {
      pipeline_id: pipelineId,
      organization_id: organizationId,
      token_hash: hashOf(token).toString('hex'),
      created_at: now,
      created_by: userId,
    };
    await this.db
      .insertInto('engine_webhook_tokens')
      .values(row)
      .onConflict((oc) =>
        oc.column('pipeline_id').doUpdateSet({
          token_hash: row.token_hash,
          created_at: row.created_at,
          created_by: row.created_by,
        }),
      )
      .execute();
    return token;
  }

  async revoke(organizationId: string, pipelineId: string): Promise<boolean> {
    const result = await this.db
      .deleteFrom('engine_webhook_tokens')
      .where('organization_id', '=', organizationId)
      .where('pipeline_id', '=', pipelineId)
      .executeTakeFirst();
    return Number(result.numDeletedRows) === 1;
  }

  /** When the pipeline has a token: its issue time. */
  async issuedAt(organizationId: string, pipelineId: string): Promise<number | undefined> {
    const row = await this.db
      .selectFrom('engine_webhook_tokens')
      .select('created_at')
      .where('organization_id', '=', organizationId)
      .where('pipeline_id', '=', pipelineId)
      .executeTakeFirst();
    return row ? Number(row.created_at) : undefined;
  }

  /** Whether `token` is the pipeline's current token (constant time in the token's bytes). */
  async verify(pipelineId: string, token: string | undefined): Promise<boolean> {
    const row = await this.db
      .selectFrom('engine_webhook_tokens')
      .select('token_hash')
      .where('pipeline_id', '=', pipelineId)
      .executeTakeFirst();
    // Hash even without a row, so that a missing pipeline takes as long as a wrong token.
    const presented = hashOf(token ?? '');
    const expected = row ? Buffer.from(row.token_hash, 'hex') : Buffer.alloc(presented.length);
    return timingSafeEqual(presented, expected) && row !== undefined && token !== undefined;
  }
}
