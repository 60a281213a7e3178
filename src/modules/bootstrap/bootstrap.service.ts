import { randomBytes, randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Clock } from '../../platform/clock.js';
import { classifyDriverError } from '../../storage/driver-errors.js';
import type { Database } from '../../storage/tables.js';
import { recordAudit } from '../audit/audit.repository.js';
import { passwordProblem } from '../users/password-policy.js';
import { hashPassword } from '../users/passwords.js';

export interface CreatedAdministrator {
  userId: string;
  email: string;
  organizationId: string;
  /** Present only when Meridian generated it: shown once, never stored in clear. */
  generatedPassword: string | null;
}

/** A random password of 24 characters from an unambiguous alphabet. */
export function generatePassword(): string {
  const alphabet = 'ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789';
  return [...randomBytes(24)].map((b) => alphabet[b % alphabet.length]).join('');
}

/**
 * Creates a System Administrator who owns a new organization. Used on first start and by
 * `meridian admin create`. Returns null when the e-mail is taken (a replica that started alongside won the race).
 */
export async function createAdministrator(
  deps: { db: Kysely<Database>; clock: Clock },
  input: { email: string; password?: string | undefined; organizationName?: string; displayName?: string },
): Promise<CreatedAdministrator | null> {
  const now = deps.clock.now();
  const problem =
    input.password === undefined
      ? null
      : await passwordProblem(input.password, { email: input.email, displayName: input.displayName });
  if (problem) throw new Error(`the administrator's ${problem}`);
  const password = input.password ?? generatePassword();
  const userId = randomUUID();
  const organizationId = randomUUID();
  const passwordHash = await hashPassword(password);
  try {
    await deps.db.transaction().execute(async (trx) => {
      await trx
        .insertInto('organizations')
        .values({
          id: organizationId,
          name: input.organizationName ?? 'Default Organization',
          status: 'active',
          created_at: now,
          created_by: null,
          updated_at: now,
          updated_by: null,
        })
        .execute();
      await trx
        .insertInto('users')
        .values({
          id: userId,
          email: input.email,
          email_normalized: input.email.toLowerCase(),
          display_name: input.displayName ?? 'Administrator',
          password_hash: passwordHash,
          status: 'active',
          is_system_admin: 1,
          deleted_at: null,
          last_login_at: null,
          created_at: now,
          created_by: null,
          updated_at: now,
          updated_by: null,
        })
        .execute();
      await trx
        .insertInto('memberships')
        .values({
          user_id: userId,
          organization_id: organizationId,
          role: 'Owner',
          created_at: now,
          updated_at: now,
        })
        .execute();
    });
  } catch (error) {
    if (classifyDriverError(error) === 'unique_violation') return null;
    throw error;
  }
  await recordAudit(deps.db, now, {
    actorUserId: null,
    action: 'user.bootstrapped',
    targetType: 'user',
    targetId: userId,
  });
  return { userId, email: input.email, organizationId, generatedPassword: input.password ? null : password };
}

/** On an empty database: one organization and one System Administrator (DESIGN.md). Null when users exist. */
export async function bootstrapIfEmpty(
  deps: { db: Kysely<Database>; clock: Clock },
  config: { adminEmail: string; adminPassword?: string | undefined },
): Promise<CreatedAdministrator | null> {
  const anyUser = await deps.db.selectFrom('users').select('id').limit(1).executeTakeFirst();
  if (anyUser) return null;
  return createAdministrator(deps, { email: config.adminEmail, password: config.adminPassword });
}
