/**
 * The Sparkplug B host application in bridge mode (MQTT_URL). Each organization's edge nodes publish on
 * the external broker under its namespace, `<namespace>/<org id>/spBv1.0/...` (a broker mount point or
 * ACL maps a node's `spBv1.0/...` there). A host tracks each node's seq and aliases, which breaks when
 * a shared subscription splits one node's messages across replicas, so one replica of the cluster holds
 * the `sparkplug-host` lease (`job_leases`) and only it subscribes to `<namespace>/+/spBv1.0/#`, takes
 * the messages in through the host's session rules (sparkplug-ingress.ts), sends rebirth requests and
 * announces each organization's primary host STATE. When it dies its lease runs out and another replica
 * takes over; that one has no sessions, so the first data of each node asks it for a rebirth.
 *
 * The lease holder also gives each organization's primary host a client of its own whose will is its
 * offline STATE (host-state-clients.ts), and runs the organizations' edge nodes, each a client whose will
 * is its NDEATH (edge-node-clients.ts). A clean stop says both itself; a crash leaves them to the
 * broker's wills; a lost lease drops the connections so that the wills, older than what the new holder
 * says, are published.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { MqttClient } from 'mqtt';
import { JobLease } from '../../../../storage/job-lease.js';
import type { Database } from '../../../../storage/tables.js';
import { SPARKPLUG_NAMESPACE } from '../../../sparkplug/sparkplug-topic.js';
import type { LiveChannel } from '../../live/live-values.js';
import type { SparkplugIngress } from '../sparkplug-ingress.js';
import { type PrimaryHostSettings, PrimaryHostState } from '../sparkplug-state.js';
import { EdgeNodeClients } from './edge-node-clients.js';
import { HostStateClients } from './host-state-clients.js';

export const SPARKPLUG_LEASE = 'sparkplug-host';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export interface SparkplugBridgeDeps {
  client: MqttClient;
  /** The external broker, for the clients of the primary hosts and edge nodes. */
  url: string;
  /** The live channel: the edge nodes hear there the values committed on every replica. */
  live: LiveChannel;
  /** Root of the per-organization namespace on the external broker. */
  namespace: string;
  db: Kysely<Database>;
  ingress: SparkplugIngress;
  primaryHost?: PrimaryHostSettings;
  /** Whether an organization exists and is active (the bridge's cache). */
  organizationExists(organizationId: string): Promise<boolean>;
  now: () => number;
  log: FastifyBaseLogger;
  /** How long the lease lasts without renewal (MERIDIAN_SPARKPLUG_LEASE); renewed every third of it. */
  leaseMs: number;
}

export class SparkplugBridgeHost {
  readonly #lease: JobLease;
  readonly #leaseMs: number;
  readonly #root: string;
  readonly #subscription: string;
  #owner = false;
  #timer: NodeJS.Timeout | undefined;
  #ticking: Promise<void> = Promise.resolve();
  #state: PrimaryHostState | null = null;
  #hosts: HostStateClients | null = null;
  #edges: EdgeNodeClients | null = null;
  #stopListening: (() => void) | undefined;

  constructor(private readonly deps: SparkplugBridgeDeps) {
    this.#leaseMs = deps.leaseMs;
    this.#lease = new JobLease(
      deps.db,
      SPARKPLUG_LEASE,
      `replica-${randomUUID().slice(0, 8)}`,
      this.#leaseMs,
    );
    this.#root = `${deps.namespace}/`;
    this.#subscription = `${deps.namespace}/+/${SPARKPLUG_NAMESPACE}/#`;
  }

  /** Whether this replica is the cluster's Sparkplug host now. */
  get owner(): boolean {
    return this.#owner;
  }

  start(): void {
    const tick = () => {
      this.#ticking = this.#ticking.then(() => this.#tick());
    };
    tick();
    this.#timer = setInterval(tick, Math.max(100, Math.floor(this.#leaseMs / 3)));
    // The client reconnected with a clean session: the owner subscribes again.
    this.deps.client.on('connect', () => {
      if (this.#owner) this.#subscribe();
    });
  }

  /**
   * Takes a message of the bridge's client; true when it was a Sparkplug message (taken in when this
   * replica is the host, else dropped: a subscription left over from a lost lease).
   */
  handle(topic: string, payload: Buffer): boolean {
    if (!topic.startsWith(this.#root)) return false;
    const rest = topic.slice(this.#root.length);
    const slash = rest.indexOf('/');
    if (slash < 0) return false;
    const sparkplugTopic = rest.slice(slash + 1);
    if (!sparkplugTopic.startsWith(`${SPARKPLUG_NAMESPACE}/`)) return false;
    const organizationId = rest.slice(0, slash);
    if (!this.#owner || !UUID.test(organizationId)) return true;
    // Meridian's own edge node: its client takes the commands to it; its births are not the host's.
    if (this.deps.ingress.edge?.isOwn(organizationId, sparkplugTopic)) return true;
    const namespace = `${this.#root}${organizationId}/`;
    const send = (commandTopic: string, bytes: Uint8Array) =>
      this.deps.client.publish(namespace + commandTopic, Buffer.from(bytes), { qos: 0 });
    void (async () => {
      try {
        if (!(await this.deps.organizationExists(organizationId))) return;
        if (this.#state?.isOwnState(organizationId, sparkplugTopic)) return;
        void this.#state?.ensure(organizationId, namespace);
        await this.deps.ingress.ingest(organizationId, sparkplugTopic, payload, send);
      } catch (error) {
        this.deps.log.info({ err: error, topic: topic.slice(0, 200) }, 'bridged sparkplug message refused');
      }
    })();
    return true;
  }

  /** Stops renewing; the owner announces its hosts offline and gives the lease up. */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await this.#ticking;
    if (this.#owner) {
      const { hosts, edges } = this.#resign(false);
      await Promise.all([hosts?.settled(), edges?.settled()]);
      await this.#lease.release().catch(() => {});
    }
  }

  async #tick(): Promise<void> {
    let held: boolean;
    try {
      held = await this.#lease.hold(this.deps.now());
    } catch (error) {
      this.deps.log.warn({ err: error }, 'sparkplug host lease not renewed');
      held = false;
    }
    if (held && !this.#owner) await this.#takeOver();
    if (held) await this.#announceHosts();
    else if (!held && this.#owner) {
      this.deps.log.info('sparkplug host lease lost: another replica is the Sparkplug host');
      this.#resign(true);
    }
  }

  async #takeOver(): Promise<void> {
    this.#owner = true;
    this.deps.log.info('sparkplug host lease taken: this replica is the Sparkplug host');
    const { primaryHost, url, now, log } = this.deps;
    // The broker publishes a silent client's will after 1.5 keep-alives: before the lease runs out.
    const keepaliveSeconds = Math.max(1, Math.floor(this.#leaseMs / 2000));
    const edge = this.deps.ingress.edge;
    if (edge) {
      this.#edges = new EdgeNodeClients({
        url,
        namespace: this.deps.namespace,
        live: this.deps.live,
        keepaliveSeconds,
        onCommand: (organizationId, topic, payload) => edge.command(organizationId, topic, payload),
        onLost: (organizationId) => edge.lost(organizationId),
        log,
      });
      edge.attach(this.#edges);
    }
    if (primaryHost) {
      this.#hosts = new HostStateClients({ url, keepaliveSeconds, now, log });
      const state = new PrimaryHostState({
        hostIdOf: (id) => primaryHost.hostIdOf(id),
        announcer: this.#hosts,
        now,
        onError: (error) => log.warn({ err: error }, 'sparkplug primary host state not announced'),
      });
      this.#state = state;
      this.#stopListening = primaryHost.onChange((id) => {
        state.changed(id);
        edge?.changed(id);
      });
    }
    this.#subscribe();
    if (edge) for (const id of await this.#activeOrganizations()) void edge.ensure(id);
  }

  async #activeOrganizations(): Promise<string[]> {
    const rows = await this.deps.db
      .selectFrom('organizations')
      .select('id')
      .where('status', '=', 'active')
      .execute()
      .catch(() => []);
    return rows.map((row) => row.id);
  }

  /**
   * Every active organization's primary host is announced (once; at each renewal for organizations
   * created since), so that nodes waiting for a primary host start.
   */
  async #announceHosts(): Promise<void> {
    const state = this.#state;
    if (!state) return;
    for (const id of await this.#activeOrganizations()) void state.ensure(id, `${this.#root}${id}/`);
  }

  #subscribe(): void {
    this.deps.client.subscribe(this.#subscription, { qos: 1 }, (error) => {
      if (error) this.deps.log.error({ err: error }, 'sparkplug host subscription failed');
    });
  }

  /**
   * No longer the host: unsubscribe and forget the sessions (another has them now). A stop says the
   * hosts offline and the edge nodes dead; a lost lease drops their connections, leaving it to the wills.
   */
  #resign(lost: boolean): { hosts: HostStateClients | null; edges: EdgeNodeClients | null } {
    const { hosts, edges } = { hosts: this.#hosts, edges: this.#edges };
    this.#owner = false;
    this.deps.client.unsubscribe(this.#subscription);
    this.#stopListening?.();
    if (lost) {
      hosts?.abandon();
      edges?.abandon();
    }
    this.deps.ingress.edge?.detach();
    this.#state?.stop();
    this.#state = null;
    this.#hosts = null;
    this.#edges = null;
    this.deps.ingress.host.forgetAll();
    return { hosts, edges };
  }
}
