import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import type { Clock } from '../../../platform/clock.js';
import type { EntityEvents } from '../../../platform/entity-events.js';
import type { Database } from '../../../storage/tables.js';
import type { PipelinesRepository } from '../pipelines/pipelines.repository.js';
import type { EnqueueInput, ExecutionsRepository } from '../queue/executions.repository.js';
import { PipelineTriggers } from './pipeline-triggers.js';
import { ValueTriggers } from './value-triggers.js';
import { webhookCredentialRoutes } from './webhook-credentials.routes.js';
import { WebhookFailureLimits } from './webhook-limits.js';
import { WebhookSigning } from './webhook-signing.js';
import { WebhookTokens } from './webhook-tokens.js';
import { type WebhookDeps, webhookRoutes } from './webhooks.routes.js';

/**
 * Installs the triggers beyond manual and schedule: webhooks (routes), UNS and connection values (a
 * listener on the UNS commit path) and pipeline-finished (told by the engine). Each records a skipped
 * execution with the reason `maintenance` while its organization is in maintenance.
 */
export async function installTriggers(
  app: FastifyInstance,
  deps: {
    db: Kysely<Database>;
    executions: ExecutionsRepository;
    pipelines: PipelinesRepository;
    clock: Clock;
    /** Pipeline changes, announced by the service that made them (here and from other replicas). */
    events: EntityEvents;
    topicPrefix: string;
    onQueued: () => void;
    /** Stores the value triggers' executions with the engine's next turn (ExecutionEngine.enqueue). */
    enqueue: (inputs: EnqueueInput[]) => Promise<void>;
    /** Webhook signing (sealed with the key-encryption key) and the limits of failed calls. */
    webhooks: {
      keyEncryptionKey: Buffer;
      maxFailures: number;
      windowSeconds: number;
      toleranceSeconds: number;
    };
  },
): Promise<{ pipelineTriggers: PipelineTriggers; valueTriggers: ValueTriggers }> {
  const { db, executions, clock, onQueued } = deps;
  const maintenance = () => (app.hasDecorator('maintenance') ? app.maintenance : null);
  const skipReason = async (organizationId: string) =>
    (await maintenance()?.skipReason(organizationId)) ?? null;
  const { keyEncryptionKey, toleranceSeconds } = deps.webhooks;
  const webhooks: WebhookDeps = {
    tokens: new WebhookTokens(db),
    signing: new WebhookSigning({ db, keyEncryptionKey, toleranceSeconds }),
    limits: new WebhookFailureLimits(deps.webhooks, () => clock.now()),
    pipelines: deps.pipelines,
    executions,
    clock,
    onQueued,
    maintenance,
  };
  await app.register(webhookCredentialRoutes, {
    prefix: '/api/v1/engine/pipelines',
    ...webhooks,
    db,
    toleranceSeconds,
  });
  await app.register(webhookRoutes, { prefix: '/api/v1/engine/webhooks', ...webhooks });

  const valueTriggers = new ValueTriggers({
    db,
    clock,
    log: app.log,
    topicPrefix: deps.topicPrefix,
    enqueue: deps.enqueue,
    skipReason,
  });
  const listener = (job: Parameters<ValueTriggers['committed']>[0]) => valueTriggers.committed(job);
  const pipelineTriggers = new PipelineTriggers({
    db,
    executions,
    clock,
    log: app.log,
    onQueued,
    skipReason,
  });
  app.addHook('onReady', async () => {
    await valueTriggers.start();
    if (app.hasDecorator('uns')) app.uns.committedListeners.add(listener);
  });
  // A pipeline change is applied before the answer on the replica that made it, as the bus tells the others.
  const stopListening = deps.events.on('pipeline', async () => {
    pipelineTriggers.invalidate();
    await valueTriggers.refresh();
  });
  app.addHook('onClose', async () => {
    stopListening();
    if (app.hasDecorator('uns')) app.uns.committedListeners.delete(listener);
    valueTriggers.stop();
  });
  return { pipelineTriggers, valueTriggers };
}
