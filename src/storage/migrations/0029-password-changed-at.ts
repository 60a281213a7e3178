import type { MeridianMigration } from '../migrator.js';

/**
 * When a user's password last changed (their own change, an administrator's reset, `meridian admin
 * reset-password`); null while it is the one the user was created with. The sign-in lockout is counted in
 * each replica's memory: a lock whose failures all came before this time is lifted, on every replica, at
 * the next attempt (modules/sessions/sessions.service.ts).
 */
export const passwordChangedAt: MeridianMigration = {
  name: '0029-password-changed-at',
  async up(db) {
    await db.schema.alterTable('users').addColumn('password_changed_at', 'bigint').execute();
  },
};
