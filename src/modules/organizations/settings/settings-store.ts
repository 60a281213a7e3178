import type { Kysely } from 'kysely';
import type { Clock } from '../../../platform/clock.js';
import { notFound } from '../../../platform/errors.js';
import type { InvalidationBus } from '../../../platform/invalidation-bus.js';
import type { Database } from '../../../storage/tables.js';
import { STANDING_TOPICS } from '../../users/access-directory.js';
import { SettingsRepository, type SettingsRow } from './settings.repository.js';

/** Announced on the bus when an organization's settings or maintenance mode changed. */
export const SETTINGS_CHANGED = 'organization-settings.changed';

/**
 * Each replica's cache of settings rows. A change announces itself on the invalidation bus, so another
 * replica drops its copy within milliseconds (PostgreSQL LISTEN/NOTIFY) and tells its listeners (the
 * consoles' event streams).
 */
export class SettingsStore {
  private readonly rows = new Map<string, SettingsRow>();
  private readonly listeners = new Set<(organizationId: string | null) => void>();
  private generation = 0;
  private readonly unsubscribe: () => void;

  constructor(private readonly deps: { db: Kysely<Database>; clock: Clock; bus: InvalidationBus }) {
    this.unsubscribe = deps.bus.subscribe((event) => {
      if (event.topic === '*') {
        this.generation++;
        this.rows.clear();
        this.tell(null);
      } else if (
        (event.topic === SETTINGS_CHANGED || event.topic === STANDING_TOPICS.organization) &&
        event.id
      ) {
        this.generation++;
        this.rows.delete(event.id);
        this.tell(event.id);
      }
    });
  }

  /** The organization's row, from the cache or the database (the defaults while none is stored). */
  async get(organizationId: string): Promise<SettingsRow> {
    const cached = this.rows.get(organizationId);
    if (cached) return cached;
    const generation = this.generation;
    const row = await new SettingsRepository(this.deps.db).findOrDefault(organizationId);
    if (!row) throw notFound('organization');
    // A change announced while reading may not be in what was read: keep it uncached then.
    if (generation === this.generation) this.rows.set(organizationId, row);
    return row;
  }

  /** Tells every replica (this one first) that the organization's row changed. */
  async changed(organizationId: string): Promise<void> {
    await this.deps.bus.publish({ topic: SETTINGS_CHANGED, id: organizationId });
  }

  /** Called with the organization whose row changed (null: any may have). */
  onChange(listener: (organizationId: string | null) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  close(): void {
    this.unsubscribe();
    this.listeners.clear();
  }

  private tell(organizationId: string | null): void {
    for (const listener of this.listeners) {
      try {
        listener(organizationId);
      } catch {
        // one failing listener must not keep the others from hearing of the change
      }
    }
  }
}
