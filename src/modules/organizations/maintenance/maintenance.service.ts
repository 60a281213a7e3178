import type { Kysely } from 'kysely';
import type { Actor } from '../../../platform/actor.js';
import type { Clock } from '../../../platform/clock.js';
import { badRequest, notFound, unavailable } from '../../../platform/errors.js';
import type { Database } from '../../../storage/tables.js';
import { recordChange } from '../../audit/record-change.js';
import { SettingsRepository, type SettingsRow } from '../settings/settings.repository.js';
import type { MaintenanceState, SetMaintenanceBody } from '../settings/settings.schemas.js';
import { maintenanceOf, SETTINGS_TARGET } from '../settings/settings.service.js';
import type { SettingsStore } from '../settings/settings-store.js';
import { changeReason } from '../settings/settings-values.js';

/** Retry-After of a refusal during maintenance without an end time. */
const RETRY_AFTER_DEFAULT_S = 60;
const ATTEMPTS = 5;

/** What the change history records of a maintenance switch. */
const recorded = (m: MaintenanceState) => ({
  maintenance: { enabled: m.enabled, reason: m.reason, until: m.until },
});

/**
 * Maintenance mode of an organization, the API the areas it pauses call (see README.md):
 * - `isOn(orgId)` / `state(orgId)`: from this replica's cache, which every switch on any replica evicts
 *   within milliseconds over the invalidation bus; an end time is honoured to the millisecond.
 * - `assertNotInMaintenance(orgId)`: throws 503 `unavailable` with `Retry-After` (webhooks).
 * - `skipReason(orgId)`: `'maintenance'` while on, else null (schedule and UNS triggers record a skipped
 *   execution with it, never drop the firing silently).
 * UNS publishing and the historian never ask: plant data is never dropped.
 */
export class MaintenanceService {
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly deps: { db: Kysely<Database>; clock: Clock; store: SettingsStore }) {}

  async state(organizationId: string): Promise<MaintenanceState> {
    return maintenanceOf(await this.deps.store.get(organizationId), this.deps.clock.now());
  }

  async isOn(organizationId: string): Promise<boolean> {
    return (await this.state(organizationId)).enabled;
  }

  /** Null when work may start; `'maintenance'`, the reason a skipped execution records, while on. */
  async skipReason(organizationId: string): Promise<'maintenance' | null> {
    return (await this.isOn(organizationId)) ? 'maintenance' : null;
  }

  /** 503 `unavailable` with `Retry-After` (the seconds to its end time, else 60) while maintenance is on. */
  async assertNotInMaintenance(organizationId: string): Promise<void> {
    const state = await this.state(organizationId);
    if (!state.enabled) return;
    const retryAfter = state.until
      ? Math.max(1, Math.ceil((Date.parse(state.until) - this.deps.clock.now()) / 1000))
      : RETRY_AFTER_DEFAULT_S;
    throw unavailable(`the organization is in maintenance: ${state.reason}`, retryAfter);
  }

  /**
   * Switches maintenance on (or changes its reason and end time) or off, with a reason; records the switch
   * with its actor in the change history and tells every replica and console.
   */
  async set(actor: Actor, organizationId: string, body: SetMaintenanceBody): Promise<MaintenanceState> {
    const reason = changeReason(body.reason, true)!;
    const { db, clock, store } = this.deps;
    let until: number | null = null;
    if (body.until !== undefined && body.until !== null) {
      if (!body.enabled) throw badRequest('until applies only when enabling maintenance');
      until = Date.parse(body.until);
      if (!Number.isFinite(until)) throw badRequest('until must be an RFC 3339 date-time');
      if (until <= clock.now()) throw badRequest('until must be in the future');
    }
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const row = await new SettingsRepository(db).findOrDefault(organizationId);
      if (!row) throw notFound('organization');
      const now = clock.now();
      const before = maintenanceOf(row, now);
      const wasOn = before.enabled;
      // Switching off what is off changes nothing and records nothing.
      if (!body.enabled && !wasOn && row.maintenance_enabled === 0) return before;
      const fields = body.enabled
        ? {
            maintenance_enabled: 1,
            maintenance_reason: reason,
            // Changing the reason or end time of an ongoing maintenance keeps when and by whom it began.
            maintenance_since: wasOn ? row.maintenance_since : now,
            maintenance_by: wasOn ? row.maintenance_by : actor.userId,
            maintenance_until: until,
          }
        : {
            maintenance_enabled: 0,
            maintenance_reason: null,
            maintenance_since: null,
            maintenance_by: null,
            maintenance_until: null,
          };
      const next = { ...row, ...fields, updated_at: now, updated_by: actor.userId };
      const after = maintenanceOf(next, now);
      const saved = await db.transaction().execute(async (trx) => {
        const repo = new SettingsRepository(trx);
        await repo.ensure(organizationId, now);
        const ok = await repo.updateMaintenance(organizationId, row.version, {
          ...fields,
          updated_at: now,
          updated_by: actor.userId,
        });
        if (!ok) return false;
        await recordChange(trx, now, {
          organizationId,
          actor,
          action: body.enabled
            ? wasOn
              ? 'maintenance.updated'
              : 'maintenance.enabled'
            : 'maintenance.disabled',
          targetType: SETTINGS_TARGET,
          targetId: organizationId,
          before: recorded(before),
          after: recorded(after),
          reason,
        });
        return true;
      });
      if (saved) {
        await store.changed(organizationId);
        return after;
      }
      // A settings change came in between: read again and switch on the new version.
    }
    throw unavailable('the settings are being changed concurrently; try again', 1);
  }

  /**
   * Ends every maintenance whose end time has passed and records it (actor: none, the system). Each
   * replica sweeps; the compare-and-set on the version lets exactly one of them record each end.
   */
  async endExpired(): Promise<number> {
    const { db, clock, store } = this.deps;
    const now = clock.now();
    let ended = 0;
    for (const row of await new SettingsRepository(db).expiredMaintenance(now)) {
      if (await this.endOne(row, now)) {
        ended++;
        await store.changed(row.organization_id);
      }
    }
    return ended;
  }

  /** Sweeps for ended maintenance every `intervalMs` until `stop`. */
  start(intervalMs: number, onError: (error: unknown) => void): void {
    this.timer = setInterval(() => {
      this.endExpired().catch(onError);
    }, intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  private endOne(row: SettingsRow, now: number): Promise<boolean> {
    const before = {
      maintenance: {
        enabled: true,
        reason: row.maintenance_reason,
        until: new Date(row.maintenance_until!).toISOString(),
      },
    };
    return this.deps.db.transaction().execute(async (trx) => {
      const ok = await new SettingsRepository(trx).updateMaintenance(row.organization_id, row.version, {
        maintenance_enabled: 0,
        maintenance_reason: null,
        maintenance_since: null,
        maintenance_by: null,
        maintenance_until: null,
        updated_at: now,
        updated_by: null,
      });
      if (!ok) return false;
      await recordChange(trx, now, {
        organizationId: row.organization_id,
        actor: { userId: null },
        action: 'maintenance.ended',
        targetType: SETTINGS_TARGET,
        targetId: row.organization_id,
        before,
        after: { maintenance: { enabled: false, reason: null, until: null } },
        reason: 'the scheduled end time passed',
      });
      return true;
    });
  }
}
