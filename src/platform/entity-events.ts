import type { InvalidationBus, InvalidationEvent } from './invalidation-bus.js';

/** A configuration entity changed: created, updated, reverted, imported, enabled, disabled or deleted. */
export interface EntityChange {
  /** The entity kind (`pipeline`); `*` after the bus may have missed changes (anything may have changed). */
  type: string;
  /** Absent for `*` only. */
  organizationId?: string;
  /** Absent when several entities of the organization changed at once (an import). */
  id?: string;
}

/** Applies a change; the replica that made it waits for it before answering. */
export type EntityListener = (change: EntityChange) => void | Promise<void>;

const TOPIC = 'entity.changed';

/**
 * Entity changes, announced once by the service that made them. On the replica that made the change
 * `changed` runs every listener of the kind and waits for them (a trigger registry applies the change
 * before the answer is sent), then tells the other replicas over the invalidation bus, where the
 * listeners run as the notification arrives. After a gap in the bus (`*`) every listener hears a `*`.
 */
export class EntityEvents {
  private readonly listeners = new Map<string, Set<EntityListener>>();
  /** The event being published by this replica: the bus delivers it here too, where it was already applied. */
  private own: InvalidationEvent | undefined;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly bus: InvalidationBus,
    private readonly onError: (error: unknown, change: EntityChange) => void = () => {},
  ) {
    this.unsubscribe = bus.subscribe((event) => {
      if (event === this.own) return;
      const change = fromEvent(event);
      if (change) void this.apply(change);
    });
  }

  /** Listens for changes of `type` (and for `*`); answers the function that stops listening. */
  on(type: string, listener: EntityListener): () => void {
    let set = this.listeners.get(type);
    if (!set) {
      set = new Set();
      this.listeners.set(type, set);
    }
    set.add(listener);
    return () => set.delete(listener);
  }

  /**
   * Announces a committed change: applied here first (resolves once every listener has; a listener's
   * failure is reported to onError, never thrown at the caller, whose change is committed), then sent to
   * the other replicas.
   */
  async changed(change: EntityChange): Promise<void> {
    await this.apply(change);
    const event: InvalidationEvent = {
      topic: `${TOPIC}:${change.type}`,
      id: JSON.stringify([change.organizationId ?? null, change.id ?? null]),
    };
    this.own = event;
    let sent: Promise<void>;
    try {
      sent = this.bus.publish(event);
    } finally {
      this.own = undefined;
    }
    await sent.catch((error) => this.onError(error, change));
  }

  close(): void {
    this.unsubscribe();
  }

  private async apply(change: EntityChange): Promise<void> {
    const targets =
      change.type === '*'
        ? [...this.listeners.values()].flatMap((s) => [...s])
        : [...(this.listeners.get(change.type) ?? [])];
    await Promise.all(
      targets.map(async (listener) => {
        try {
          await listener(change);
        } catch (error) {
          this.onError(error, change);
        }
      }),
    );
  }
}

function fromEvent(event: InvalidationEvent): EntityChange | undefined {
  if (event.topic === '*') return { type: '*' };
  if (!event.topic.startsWith(`${TOPIC}:`)) return undefined;
  const type = event.topic.slice(TOPIC.length + 1);
  try {
    const [organizationId, id] = JSON.parse(event.id ?? '[]') as [string | null, string | null];
    return { type, ...(organizationId ? { organizationId } : {}), ...(id ? { id } : {}) };
  } catch {
    return { type };
  }
}

/** How a kind's service announces its committed changes (nothing when the module runs without events). */
export type Announce = (organizationId: string, id: string) => Promise<void>;

/** The announcer of one kind's changes, for its service. */
export function announcerOf(events: EntityEvents | undefined, type: string): Announce {
  return (organizationId, id) => events?.changed({ type, organizationId, id }) ?? Promise.resolve();
}
