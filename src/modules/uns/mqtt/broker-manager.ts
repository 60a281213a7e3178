import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { InvalidationBus } from '../../../platform/invalidation-bus.js';
import type { Database } from '../../../storage/tables.js';
import type { AcceptedRecord } from '../historian/historian-writer.js';
import type { LiveChannel, LiveValue } from '../live/live-values.js';
import type { PublishFanout, PublishService } from '../publishing/publish.service.js';
import { startBridge } from './bridge-client.js';
import type { BrokerBackend, BrokerMode, BrokerStatus } from './broker-types.js';
import { startEmbeddedBroker } from './embedded/embedded-broker.js';
import { MessageRates } from './message-rates.js';
import type { TokenAuthenticator } from './mqtt-auth.js';
import type { SparkplugIngress } from './sparkplug-ingress.js';
import type { PrimaryHostSettings } from './sparkplug-state.js';

/** Which broker runs: the embedded one on a port, a bridge to an external URL, or none. */
export interface BrokerSettings {
  mode: BrokerMode;
  mqttPort: number;
  mqttUrl: string | null;
}

export interface BrokerManagerDeps {
  host: string;
  namespace: string;
  topicPrefix: string;
  now: () => number;
  db: Kysely<Database>;
  /** Organization changes (suspended, activated, deleted) evict the bridge's cache of them. */
  bus: InvalidationBus;
  authenticate: TokenAuthenticator;
  /** How often an open MQTT session's credential is checked again, in ms (MERIDIAN_MQTT_SESSION_RECHECK). */
  sessionRecheckMs: number;
  /** The time credentials expire against (the app's clock). */
  clockNow: () => number;
  publisher: () => PublishService;
  log: FastifyBaseLogger;
  /** Told the mode of every applied setting (readiness checks follow it). */
  onModeChange?: (mode: BrokerMode) => void;
  /** Values heard on the bridge's live channel: this process's live streams. */
  deliverLive?: (organizationId: string, values: LiveValue[]) => void;
  /** Told once a swap finished, started or not (live streams end: they reconnect to the new broker). */
  onSwapped?: () => void;
  /** Sparkplug B host application of the embedded broker, and of the bridge's lease holder. */
  sparkplug?: SparkplugIngress;
  /** The organizations' Sparkplug primary host ids, announced by the embedded broker. */
  primaryHost?: PrimaryHostSettings;
  /** How long the bridge's `sparkplug-host` lease lasts without renewal, in ms (MERIDIAN_SPARKPLUG_LEASE). */
  sparkplugLeaseMs: number;
}

/**
 * Owns the broker's lifecycle: starts the configured one, swaps it when the settings change (no
 * restart), stops it at shutdown, and hands every committed HTTP publish to it.
 */
export class BrokerManager implements PublishFanout {
  private backend: BrokerBackend | null = null;
  private settings: BrokerSettings | null = null;
  private failure: string | null = null;
  private switching: Promise<void> = Promise.resolve();
  readonly rates = new MessageRates();

  constructor(private readonly deps: BrokerManagerDeps) {}

  /** Stops the running broker and starts the one `settings` describe; rejects when it cannot start. */
  apply(settings: BrokerSettings): Promise<void> {
    const run = this.switching.then(() => this.swap(settings)).finally(() => this.deps.onSwapped?.());
    this.switching = run.catch(() => {});
    return run;
  }

  private async swap(settings: BrokerSettings): Promise<void> {
    const previous = this.backend;
    this.backend = null;
    await previous?.stop();
    this.settings = settings;
    this.failure = null;
    this.deps.onModeChange?.(settings.mode);
    const common = {
      publisher: this.deps.publisher(),
      topicPrefix: this.deps.topicPrefix,
      now: this.deps.now,
      rates: this.rates,
      log: this.deps.log,
    };
    try {
      if (settings.mode === 'embedded') {
        this.backend = await startEmbeddedBroker({
          ...common,
          host: this.deps.host,
          port: settings.mqttPort,
          authenticate: this.deps.authenticate,
          sparkplug: this.deps.sparkplug,
          primaryHost: this.deps.primaryHost,
          sessionWatch: {
            bus: this.deps.bus,
            intervalMs: this.deps.sessionRecheckMs,
            now: this.deps.clockNow,
          },
        });
      } else if (settings.mode === 'external' && settings.mqttUrl) {
        this.backend = await startBridge({
          ...common,
          url: settings.mqttUrl,
          namespace: this.deps.namespace,
          db: this.deps.db,
          bus: this.deps.bus,
          deliverLive: this.deps.deliverLive ?? (() => {}),
          sparkplug: this.deps.sparkplug,
          primaryHost: this.deps.primaryHost,
          sparkplugLeaseMs: this.deps.sparkplugLeaseMs,
        });
      }
    } catch (error) {
      this.failure = (error as Error).message;
      throw error;
    }
  }

  /** The channel that carries committed values between replicas; null unless a bridge runs. */
  liveChannel(): LiveChannel | null {
    return this.backend?.live ?? null;
  }

  /** The settings in effect (null before the first apply). */
  current(): BrokerSettings | null {
    return this.settings;
  }

  status(): BrokerStatus & { messages: ReturnType<MessageRates['snapshot']> } {
    const base: BrokerStatus = this.backend?.status() ?? {
      mode: this.settings?.mode ?? 'disabled',
      state: this.failure ? 'failed' : 'stopped',
      address: null,
      clients: null,
      error: this.failure,
    };
    return { ...base, messages: this.rates.snapshot() };
  }

  /** For /readyz: resolves when the broker is disabled, listening or connected. */
  async ready(): Promise<void> {
    const status = this.status();
    if (status.mode === 'disabled' || status.state === 'listening' || status.state === 'connected') return;
    throw new Error(`broker ${status.mode} is ${status.state}${status.error ? `: ${status.error}` : ''}`);
  }

  deliver(organizationId: string, records: readonly AcceptedRecord[]): void {
    this.backend?.deliver(organizationId, records);
  }

  async stop(): Promise<void> {
    await this.switching;
    const backend = this.backend;
    this.backend = null;
    await backend?.stop();
  }
}
