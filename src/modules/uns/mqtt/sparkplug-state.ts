/**
 * Meridian as each organization's Sparkplug B primary host: the embedded broker announces, retained in
 * the organization's namespace, `spBv1.0/STATE/<host id>` = `{"online": true, "timestamp": ...}`, so that
 * edge nodes configured to wait for a primary host start sending
 * (tck-id-message-flow-edge-node-birth-publish-phid-wait). The host id is an organization setting
 * (`sparkplug.hostId`, default `meridian`); a change announces the old id offline and the new one online.
 */
import { stateTopic } from '../../sparkplug/sparkplug-topic.js';
import type { FunctionWrite } from './sparkplug-edge/sparkplug-edge-writes.js';
import type { EdgeNodeSettings } from './sparkplug-edge.js';

/** What the broker is given of the organizations' settings. */
export interface PrimaryHostSettings {
  hostIdOf(organizationId: string): Promise<string>;
  /** The organization's edge node settings (`sparkplug.edgeNode`), null when it publishes none. */
  edgeNodeOf?(organizationId: string): Promise<EdgeNodeSettings | null>;
  /** Runs the write function an edge node write target names (the connections module's, once installed). */
  functionWrite?(): FunctionWrite | null;
  /** Told the organization whose settings changed (null: any may have); answers its unsubscribe. */
  onChange(listener: (organizationId: string | null) => void): () => void;
}

export interface PrimaryHostDeps {
  /** The organization's host id (its settings). */
  hostIdOf(organizationId: string): Promise<string>;
  /** Publishes a retained message at QoS 1 into the broker (the topic already in the namespace). */
  publishRetained(topic: string, payload: Buffer): void;
  now(): number;
  onError(error: unknown): void;
}

/** The STATE payload (Sparkplug 3.0, 5.13: tck-id-operational-behavior-host-application-connect-birth-payload). */
export function statePayload(online: boolean, timestamp: number): Buffer {
  return Buffer.from(JSON.stringify({ online, timestamp }));
}

export class PrimaryHostState {
  /** The host id announced online, by organization, with the organization's namespace. */
  readonly #announced = new Map<string, { namespace: string; hostId: string }>();
  readonly #pending = new Map<string, Promise<void>>();

  constructor(private readonly deps: PrimaryHostDeps) {}

  /** Announces the organization's primary host once (a client of it connected); later calls wait for that. */
  ensure(organizationId: string, namespace: string): Promise<void> {
    if (this.#announced.has(organizationId)) return Promise.resolve();
    return this.#refresh(organizationId, namespace);
  }

  /** The organization's settings changed (null: any organization's may have): announce a new host id. */
  changed(organizationId: string | null): void {
    const organizations = organizationId === null ? [...this.#announced.keys()] : [organizationId];
    for (const id of organizations) {
      const announced = this.#announced.get(id);
      if (announced) void this.#refresh(id, announced.namespace);
    }
  }

  /** True for the organization's own STATE topic, which only Meridian publishes. */
  isOwnState(organizationId: string, topic: string): boolean {
    const announced = this.#announced.get(organizationId);
    return announced !== undefined && topic === stateTopic(announced.hostId);
  }

  /** The broker is stopping: every announced host goes offline (its will, said while it still can). */
  stop(): void {
    for (const { namespace, hostId } of this.#announced.values()) {
      this.deps.publishRetained(namespace + stateTopic(hostId), statePayload(false, this.deps.now()));
    }
    this.#announced.clear();
  }

  #refresh(organizationId: string, namespace: string): Promise<void> {
    const running = this.#pending.get(organizationId);
    const next = (running ?? Promise.resolve())
      .then(() => this.deps.hostIdOf(organizationId))
      .then((hostId) => {
        const before = this.#announced.get(organizationId);
        if (before?.hostId === hostId) return;
        const now = this.deps.now();
        if (before)
          this.deps.publishRetained(namespace + stateTopic(before.hostId), statePayload(false, now));
        this.deps.publishRetained(namespace + stateTopic(hostId), statePayload(true, now));
        this.#announced.set(organizationId, { namespace, hostId });
      })
      .catch((error: unknown) => this.deps.onError(error))
      .finally(() => {
        if (this.#pending.get(organizationId) === next) this.#pending.delete(organizationId);
      });
    this.#pending.set(organizationId, next);
    return next;
  }
}
