import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type EntityChange, EntityEvents } from './entity-events.js';
import { createLocalInvalidationBus, type InvalidationEvent } from './invalidation-bus.js';

describe('EntityEvents', () => {
  it('applies a change here before changed() resolves, once, and sends it on the bus', async () => {
    const bus = createLocalInvalidationBus();
    const sent: InvalidationEvent[] = [];
    bus.subscribe((event) => sent.push(event));
    const events = new EntityEvents(bus);
    const applied: EntityChange[] = [];
    events.on('pipeline', async (change) => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      applied.push(change);
    });
    await events.changed({ type: 'pipeline', organizationId: 'org-1', id: 'p-1' });
    assert.deepEqual(applied, [{ type: 'pipeline', organizationId: 'org-1', id: 'p-1' }], 'applied once');
    assert.equal(sent.length, 1);
    assert.equal(sent[0]!.topic, 'entity.changed:pipeline');
  });

  it('applies a change another replica announced, and `*` after a gap to every listener', async () => {
    const bus = createLocalInvalidationBus();
    const events = new EntityEvents(bus);
    const heard: string[] = [];
    events.on(
      'pipeline',
      (change) => void heard.push(`pipeline ${change.organizationId ?? ''} ${change.id ?? ''}`),
    );
    events.on('model', (change) => void heard.push(`model ${change.type}`));
    await bus.publish({ topic: 'entity.changed:pipeline', id: JSON.stringify(['org-2', null]) });
    await bus.publish({ topic: 'client.changed', id: 'x' });
    await bus.publish({ topic: '*' });
    assert.deepEqual(heard, ['pipeline org-2 ', 'pipeline  ', 'model *']);
  });

  it('reports a failing listener without failing the change or the other listeners', async () => {
    const errors: unknown[] = [];
    const events = new EntityEvents(createLocalInvalidationBus(), (error) => errors.push(error));
    let other = false;
    events.on('pipeline', () => {
      throw new Error('registry down');
    });
    events.on('pipeline', () => {
      other = true;
    });
    await events.changed({ type: 'pipeline', organizationId: 'org-1' });
    assert.equal(other, true);
    assert.equal((errors[0] as Error).message, 'registry down');
  });
});
