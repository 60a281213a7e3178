import { randomUUID } from 'node:crypto';
import pg from 'pg';

/**
 * Tells every replica that something it may have cached changed: a token revoked, a client disabled or
 * deleted, a user deactivated, signing keys rotated. On SQLite there is one process and the bus is local;
 * on PostgreSQL it rides LISTEN/NOTIFY, so another replica hears of a change within milliseconds.
 */
export interface InvalidationEvent {
  /** What changed, e.g. `access-token.revoked`, `client.changed`, `signing-keys.rotated`; `*` means "forget everything". */
  topic: string;
  id?: string;
}

export type InvalidationHandler = (event: InvalidationEvent) => void;

export interface InvalidationBus {
  /** Delivers to this replica's subscribers at once and to every other replica. */
  publish(event: InvalidationEvent): Promise<void>;
  subscribe(handler: InvalidationHandler): () => void;
  close(): Promise<void>;
}

const CHANNEL = 'meridian_invalidation';

class Subscribers {
  private readonly handlers = new Set<InvalidationHandler>();
  add(handler: InvalidationHandler): () => void {
    this.handlers.add(handler);
    return () => this.handlers.delete(handler);
  }
  deliver(event: InvalidationEvent): void {
    for (const handler of this.handlers) {
      try {
        handler(event);
      } catch {
        // one failing cache must not keep the others from hearing of the change
      }
    }
  }
}

/** The bus of a single process (SQLite, tests). */
export function createLocalInvalidationBus(): InvalidationBus {
  const subscribers = new Subscribers();
  return {
    async publish(event) {
      subscribers.deliver(event);
    },
    subscribe: (handler) => subscribers.add(handler),
    async close() {},
  };
}

export interface PostgresBusOptions {
  databaseUrl: string;
  /** Sends the NOTIFY; the storage pool's query function, so publishing needs no connection of its own. */
  notify(channel: string, payload: string): Promise<void>;
  onError?: (error: Error) => void;
  /** Delay before reconnecting after the listening connection is lost. */
  reconnectDelayMs?: number;
}

/**
 * The bus over PostgreSQL LISTEN/NOTIFY. One dedicated connection listens and reconnects by itself;
 * after any gap it delivers `*`, since notifications sent meanwhile are lost.
 */
export async function createPostgresInvalidationBus(options: PostgresBusOptions): Promise<InvalidationBus> {
  const origin = randomUUID();
  const subscribers = new Subscribers();
  let client: pg.Client | undefined;
  let closed = false;
  let timer: NodeJS.Timeout | undefined;

  const connect = async (afterGap: boolean): Promise<void> => {
    const next = new pg.Client({
      connectionString: options.databaseUrl,
      application_name: 'meridian-invalidation',
    });
    next.on('error', (error) => lost(next, error));
    next.on('end', () => lost(next));
    next.on('notification', (message) => {
      if (message.channel !== CHANNEL || !message.payload) return;
      try {
        const parsed = JSON.parse(message.payload) as InvalidationEvent & { origin?: string };
        if (parsed.origin === origin) return; // delivered locally when published
        subscribers.deliver({ topic: parsed.topic, ...(parsed.id ? { id: parsed.id } : {}) });
      } catch {
        // not one of ours
      }
    });
    await next.connect();
    await next.query(`LISTEN ${CHANNEL}`);
    client = next;
    if (afterGap) subscribers.deliver({ topic: '*' });
  };

  const lost = (which: pg.Client, error?: Error) => {
    if (closed || client !== which) return;
    client = undefined;
    if (error) options.onError?.(error);
    which.end().catch(() => {});
    scheduleReconnect();
  };

  const scheduleReconnect = () => {
    if (closed || timer) return;
    timer = setTimeout(async () => {
      timer = undefined;
      try {
        await connect(true);
      } catch (error) {
        options.onError?.(error as Error);
        scheduleReconnect();
      }
    }, options.reconnectDelayMs ?? 500);
    timer.unref();
  };

  await connect(false);
  return {
    async publish(event) {
      subscribers.deliver(event);
      await options.notify(CHANNEL, JSON.stringify({ ...event, origin }));
    },
    subscribe: (handler) => subscribers.add(handler),
    async close() {
      closed = true;
      if (timer) clearTimeout(timer);
      await client?.end().catch(() => {});
      client = undefined;
    },
  };
}
