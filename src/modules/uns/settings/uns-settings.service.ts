import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { Config } from '../../../config/config.schema.js';
import { badRequest } from '../../../platform/errors.js';
import type { InvalidationBus } from '../../../platform/invalidation-bus.js';
import { openSecret, sealSecret } from '../../../platform/secrets/secret-box.js';
import type { Storage } from '../../../storage/database.js';
import type { Database } from '../../../storage/tables.js';
import type { HistorianLayout } from '../historian/historian-layout.js';
import type { CompressionFigures, StorageFigures } from '../historian/segments/storage-figures.js';
import { redactUrl } from '../mqtt/bridge-client.js';
import type { BrokerManager, BrokerSettings } from '../mqtt/broker-manager.js';
import type { BrokerMode } from '../mqtt/broker-types.js';
import { UNS_TOPICS } from '../uns-invalidation.js';

/** What `GET /api/v1/system/uns/settings` answers. */
export interface UnsSettingsView {
  storage: {
    backend: 'sqlite' | 'postgres';
    location: string;
    historian: string;
    historianLocation: string;
    /** The historian's compressed segments in figures (absent where the service has no figures). */
    compression?: CompressionFigures;
  };
  retentionDays: number;
  broker: { mode: BrokerMode; mqttPort: number; mqttUrl: string | null };
}

export interface UnsSettingsChange {
  retentionDays?: number;
  broker?: { mode: BrokerMode; mqttPort?: number; mqttUrl?: string | null };
}

const sameBroker = (a: BrokerSettings, b: BrokerSettings) =>
  a.mode === b.mode && a.mqttPort === b.mqttPort && a.mqttUrl === b.mqttUrl;

/** What the external broker's password is bound to when sealed (platform/secrets/secret-box.ts). */
const PASSWORD_PURPOSE = 'uns_settings.mqtt_password';
/** How a read shows the password: that it is set, never what it is (and what a write may send back). */
export const REDACTED_PASSWORD = '***';

/** A broker URL without its password, and the password as the URL encodes it (null when none). */
export function splitPassword(url: string): { url: string; password: string | null } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { url, password: null };
  }
  if (!parsed.password) return { url, password: null };
  const password = parsed.password;
  parsed.password = '';
  return { url: parsed.toString(), password };
}

function withPassword(url: string, password: string | null): string {
  if (password === null) return url;
  const parsed = new URL(url);
  parsed.password = password;
  return parsed.toString();
}

/**
 * UNS settings: start from the environment (MERIDIAN_UNS_RETENTION_DAYS, MERIDIAN_MQTT_PORT, MQTT_URL);
 * values changed through the API are stored (table uns_settings) and take precedence from then on,
 * at start-up too. A broker change applies at once, without a restart, on every replica: the change is
 * announced on the invalidation bus (`uns.settings.changed`) and each replica reloads the stored row and
 * swaps its broker when the one it runs differs. Updates and reloads run one at a time.
 */
export class UnsSettingsService {
  private stored: Database['uns_settings'] | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private readonly unsubscribe: () => void;
  private closed = false;

  constructor(
    private readonly deps: {
      db: Kysely<Database>;
      config: Config;
      storage: Storage;
      layout: HistorianLayout;
      /** The historian's compression figures, shown with the storage settings. */
      figures?: StorageFigures;
      broker: BrokerManager;
      bus: InvalidationBus;
      log: FastifyBaseLogger;
      /** Seals the external broker's password at rest (MERIDIAN_KEY_ENCRYPTION_KEY or the key file). */
      keyEncryptionKey: Buffer;
    },
  ) {
    this.unsubscribe = deps.bus.subscribe((event) => {
      if (event.topic === UNS_TOPICS.settings || event.topic === '*') void this.reload();
    });
  }

  /**
   * Reads the stored settings. A password still inside the stored URL (stored before passwords were
   * sealed) is moved to its sealed column first.
   */
  async load(): Promise<void> {
    let stored = await this.deps.db
      .selectFrom('uns_settings')
      .selectAll()
      .where('id', '=', 1)
      .executeTakeFirst();
    const inUrl = stored?.mqtt_url ? splitPassword(stored.mqtt_url) : null;
    if (stored && inUrl?.password) {
      const sealed = this.seal(inUrl.password);
      await this.deps.db
        .updateTable('uns_settings')
        .set({ mqtt_url: inUrl.url, mqtt_password_encrypted: sealed })
        .where('id', '=', 1)
        .execute();
      stored = { ...stored, mqtt_url: inUrl.url, mqtt_password_encrypted: sealed };
    }
    this.stored = stored;
  }

  private seal(password: string): string {
    return sealSecret(password, PASSWORD_PURPOSE, this.deps.keyEncryptionKey);
  }

  /** The stored password, opened; null when none is stored. */
  private storedPassword(): string | null {
    const sealed = this.stored?.mqtt_password_encrypted;
    return sealed ? openSecret(sealed, PASSWORD_PURPOSE, this.deps.keyEncryptionKey) : null;
  }

  /**
   * Re-reads the stored settings (another replica changed them) and applies a broker that differs from
   * the running one. Before the broker first started (onReady applies it) only the settings are read.
   * A broker that cannot start is logged and shows as failed in the broker status.
   */
  reload(): Promise<void> {
    return this.serially(async () => {
      if (this.closed) return;
      try {
        await this.load();
      } catch (error) {
        this.deps.log.warn({ err: error }, 'uns settings could not be reloaded');
        return;
      }
      const running = this.deps.broker.current();
      const wanted = this.brokerSettings();
      if (this.closed || running === null || sameBroker(running, wanted)) return;
      this.deps.log.info({ mode: wanted.mode }, 'uns broker setting changed on another replica; applying it');
      await this.deps.broker.apply(wanted).catch((error: unknown) => {
        this.deps.log.error({ err: error }, 'uns broker from the changed settings could not start');
      });
    });
  }

  /** Stops following changes (at shutdown, before the broker stops); waits for a reload under way. */
  async close(): Promise<void> {
    this.closed = true;
    this.unsubscribe();
    await this.queue;
  }

  private serially<T>(run: () => Promise<T>): Promise<T> {
    const next = this.queue.then(run);
    this.queue = next.catch(() => {});
    return next;
  }

  /** Retention in days; 0 keeps values forever. */
  retentionDays(): number {
    return this.stored?.retention_days ?? this.deps.config.unsRetentionDays;
  }

  /** The broker the settings call for. */
  brokerSettings(): BrokerSettings {
    const { config } = this.deps;
    const stored = this.stored;
    if (stored?.broker_mode) {
      return {
        mode: stored.broker_mode as BrokerMode,
        mqttPort: stored.mqtt_port ?? config.mqttPort,
        mqttUrl: stored.mqtt_url === null ? null : withPassword(stored.mqtt_url, this.storedPassword()),
      };
    }
    if (config.mqttUrl) return { mode: 'external', mqttPort: config.mqttPort, mqttUrl: config.mqttUrl };
    return {
      mode: config.mqttPort === 0 ? 'disabled' : 'embedded',
      mqttPort: config.mqttPort,
      mqttUrl: null,
    };
  }

  async view(): Promise<UnsSettingsView> {
    const { storage, layout, figures } = this.deps;
    const broker = this.deps.broker.current() ?? this.brokerSettings();
    return {
      storage: {
        backend: storage.dialect,
        location: storage.location,
        historian: layout.kind,
        historianLocation: layout.location,
        ...(figures ? { compression: await figures.read() } : {}),
      },
      retentionDays: this.retentionDays(),
      broker: { ...broker, mqttUrl: broker.mqttUrl ? redactUrl(broker.mqttUrl) : null },
    };
  }

  /**
   * Validates, applies (the broker first: a broker that cannot start changes nothing), stores, and
   * announces the change to the other replicas.
   */
  update(change: UnsSettingsChange, userId: string | null): Promise<UnsSettingsView> {
    return this.serially(() => this.updateNow(change, userId));
  }

  private async updateNow(change: UnsSettingsChange, userId: string | null): Promise<UnsSettingsView> {
    let broker: BrokerSettings | null = null;
    if (change.broker) {
      const { mode } = change.broker;
      const mqttPort = change.broker.mqttPort ?? this.brokerSettings().mqttPort;
      let mqttUrl = change.broker.mqttUrl ?? null;
      if (mode === 'external') {
        if (!mqttUrl) throw badRequest('broker.mqttUrl is required when broker.mode is external');
        let scheme = '';
        try {
          scheme = new URL(mqttUrl).protocol;
        } catch {
          throw badRequest('broker.mqttUrl must be a URL such as mqtt://host:1883');
        }
        if (!['mqtt:', 'mqtts:', 'tcp:', 'ssl:', 'ws:', 'wss:'].includes(scheme)) {
          throw badRequest('broker.mqttUrl must use mqtt, mqtts, tcp, ssl, ws or wss');
        }
        // The URL as a read shows it (password `***`) keeps the stored password.
        const sent = splitPassword(mqttUrl);
        if (sent.password === REDACTED_PASSWORD) {
          const storedPassword = this.storedPassword();
          if (storedPassword === null) {
            throw badRequest('broker.mqttUrl: no password is stored to keep; send the password itself');
          }
          mqttUrl = withPassword(sent.url, storedPassword);
        }
      }
      if (mode === 'embedded' && (mqttPort < 1 || mqttPort > 65535)) {
        throw badRequest('broker.mqttPort must be 1 to 65535 for the embedded broker');
      }
      broker = { mode, mqttPort, mqttUrl: mode === 'external' ? mqttUrl : null };
      try {
        await this.deps.broker.apply(broker);
      } catch (error) {
        throw badRequest(`broker could not start: ${(error as Error).message}`);
      }
    }
    const current = this.brokerSettings();
    // The password is stored sealed, apart from the URL.
    const url = broker?.mqttUrl ? splitPassword(broker.mqttUrl) : null;
    const row = {
      id: 1,
      retention_days: change.retentionDays ?? this.stored?.retention_days ?? null,
      broker_mode: broker?.mode ?? this.stored?.broker_mode ?? null,
      mqtt_port: broker?.mqttPort ?? this.stored?.mqtt_port ?? (this.stored ? null : current.mqttPort),
      mqtt_url: broker ? (url?.url ?? null) : (this.stored?.mqtt_url ?? null),
      mqtt_password_encrypted: broker
        ? url?.password
          ? this.seal(url.password)
          : null
        : (this.stored?.mqtt_password_encrypted ?? null),
      updated_at: Date.now(),
      updated_by: userId,
    };
    await this.deps.db
      .insertInto('uns_settings')
      .values(row)
      .onConflict((oc) => oc.column('id').doUpdateSet({ ...row, id: undefined }))
      .execute();
    this.stored = row;
    await this.deps.bus.publish({ topic: UNS_TOPICS.settings });
    return this.view();
  }
}
