import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { createTestDatabase, type TestDatabase, testDialects } from '../../test/helpers/dialects.js';
import { openStorage, type Storage } from '../storage/database.js';
import {
  createLocalInvalidationBus,
  createPostgresInvalidationBus,
  type InvalidationBus,
  type InvalidationEvent,
} from './invalidation-bus.js';

function nextEvent(bus: InvalidationBus, topic: string): Promise<InvalidationEvent> {
  return new Promise((resolve) => {
    const unsubscribe = bus.subscribe((event) => {
      if (event.topic === topic) {
        unsubscribe();
        resolve(event);
      }
    });
  });
}

describe('local invalidation bus', () => {
  it('delivers a published event to every subscriber at once', async () => {
    const bus = createLocalInvalidationBus();
    const seen: string[] = [];
    bus.subscribe((e) => seen.push(`a:${e.topic}`));
    bus.subscribe((e) => seen.push(`b:${e.topic}`));
    await bus.publish({ topic: 'client.changed', id: 'c1' });
    assert.deepEqual(seen, ['a:client.changed', 'b:client.changed']);
  });
});

describe('PostgreSQL invalidation bus [postgres]', { skip: !testDialects().includes('postgres') }, () => {
  let database: TestDatabase;
  let storage: Storage;
  let a: InvalidationBus;
  let b: InvalidationBus;

  before(async () => {
    database = await createTestDatabase('postgres');
    storage = openStorage({ databaseUrl: database.databaseUrl, dataDir: database.dataDir });
    const make = () =>
      createPostgresInvalidationBus({
        databaseUrl: database.databaseUrl!,
        notify: async (channel, payload) => {
          await sql`select pg_notify(${channel}, ${payload})`.execute(storage.db);
        },
        reconnectDelayMs: 100,
      });
    a = await make();
    b = await make();
  });
  after(async () => {
    await a?.close();
    await b?.close();
    await storage?.close();
    await database?.drop();
  });

  it('delivers an event published by one replica to another', async () => {
    const received = nextEvent(b, 'access-token.revoked');
    await a.publish({ topic: 'access-token.revoked', id: 'jti-1' });
    assert.deepEqual(await received, { topic: 'access-token.revoked', id: 'jti-1' });
  });

  it('delivers an event to its own replica exactly once', async () => {
    const seen: InvalidationEvent[] = [];
    const unsubscribe = a.subscribe((e) => seen.push(e));
    const atB = nextEvent(b, 'client.changed');
    await a.publish({ topic: 'client.changed', id: 'c9' });
    await atB; // by the time the other replica has it, a self-notification would have arrived too
    await new Promise((r) => setTimeout(r, 100));
    unsubscribe();
    assert.deepEqual(seen, [{ topic: 'client.changed', id: 'c9' }]);
  });

  it('reconnects after losing its connection and tells subscribers to forget everything', async () => {
    const flushed = nextEvent(b, '*');
    await sql`select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'meridian-invalidation' and datname = current_database()`.execute(
      storage.db,
    );
    await flushed;
    const received = nextEvent(b, 'user.changed');
    await a.publish({ topic: 'user.changed', id: 'u1' });
    assert.deepEqual(await received, { topic: 'user.changed', id: 'u1' });
  });
});
