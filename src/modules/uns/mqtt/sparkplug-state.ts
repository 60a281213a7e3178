/**
 * Meridian as each organization's Sparkplug B primary host: the embedded broker announces, retained in
 * the organization's namespace, `spBv1.0/STATE/<host id>` = `{"online": true, "timestamp": ...}`, so that
 * edge nodes configured to wait for a primary host start sending
 * (tck-id-message-flow-edge-node-birth-publish-phid-wait). The host id is an organization setting
 * (`sparkplug.hostId`, default `meridian`); a change announces the old id offline and the new one online.
 */
import { stateTopic } from '../../sparkplug/sparkplug-topic.js';
import type { FunctionWrite } from './sparkplug/edge-writes.js';
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

/**
 * Says a host online or offline, `topic` its STATE topic in the organization's namespace: the embedded
 * broker publishes it retained; a bridge gives each online host a client of its own whose will is the
 * offline STATE (sparkplug/host-state-clients.ts).
 */
export interface HostAnnouncer {
  online(organizationId: string, topic: string, timestamp: number): void;
  offline(organizationId: string, topic: string, timestamp: number): void;
}

/** The announcer of a broker that publishes into itself: a retained message at QoS 1. */
export const retainedAnnouncer = (
  publishRetained: (topic: string, payload: Buffer) => void,
): HostAnnouncer => ({
  online: (_organizationId, topic, timestamp) => publishRetained(topic, statePayload(true, timestamp)),
  offline: (_organizationId, topic, timestamp) => publishRetained(topic, statePayload(false, timestamp)),
});

export interface PrimaryHostDeps {
  /** The organization's host id (its settings). */
  hostIdOf(organizationId: string): Promise<string>;
  announcer: HostAnnouncer;
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
    for (const [organizationId, { namespace, hostId }] of this.#announced) {
      this.deps.announcer.offline(organizationId, namespace + stateTopic(hostId), this.deps.now());
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
        const { announcer } = this.deps;
        if (before) announcer.offline(organizationId, namespace + stateTopic(before.hostId), now);
        announcer.online(organizationId, namespace + stateTopic(hostId), now);
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
