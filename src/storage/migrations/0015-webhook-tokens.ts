import type { MeridianMigration } from '../migrator.js';

/**
 * Webhook tokens of pipelines (`trigger.webhook`): one secret per pipeline, shown once when issued and
 * stored only as its SHA-256 (the token is 32 random bytes, so a plain hash suffices).
 */
export const webhookTokens: MeridianMigration = {
  name: '0015-webhook-tokens',
  async up(db) {
    await db.schema
      .createTable('engine_webhook_tokens')
      .addColumn('pipeline_id', 'text', (c) => c.primaryKey().references('pipelines.id').onDelete('cascade'))
      .addColumn('organization_id', 'text', (c) =>
        c.notNull().references('organizations.id').onDelete('cascade'),
      )
      .addColumn('token_hash', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('created_by', 'text')
      .execute();
  },
};
