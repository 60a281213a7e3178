import type { EgressPolicy } from '../../../platform/egress/egress-policy.js';

/**
 * The one small interface every protocol implements: a description (config schema, function types)
 * and `connect`, which opens a session. Adding a protocol is adding a file beside this one and a line
 * in protocols/protocol-registry.ts.
 */

/** 0 good, 1 uncertain, 2 bad: the UNS quality scale. */
export type Quality = 0 | 1 | 2;

/** A JSON Schema object, as the API shows it (`x-secret: true` marks a write-only field). */
export type JsonSchema = Record<string, unknown>;

export type FunctionDirection = 'read' | 'write' | 'subscribe';

export interface FunctionType {
  /** e.g. `modbus.readHoldingRegisters`. */
  type: string;
  direction: FunctionDirection;
  description: string;
  configSchema: JsonSchema;
  /** Config fields that must not hold a ((placeholder)) (a SQL statement: values go in its params). */
  literalFields?: string[];
  /**
   * A rule across fields that the schema cannot state (registers of `quantity` values of `dataType`
   * in one request): the message naming the field, or null. Fields holding a ((placeholder)) are not
   * numbers yet and are left to the execute.
   */
  checkConfig?(config: Record<string, unknown>): string | null;
}

/** One value a device gave: the value, its quality and, when the device says, when it was produced. */
export interface DriverValue {
  value: unknown;
  quality: Quality;
  timestamp?: Date;
}

/**
 * A subscribed item's change: `key` names the item (a node id, an MQTT topic); `path`, where the device
 * has one, is the item's place in the device's tree (an OPC UA browse path), which names its topic.
 */
export type SubscriptionListener = (key: string, value: DriverValue, path?: string[]) => void;

/** What a driver reports about an open session outside of a request (the transport went away). */
export interface SessionEvents {
  onLost(error: Error): void;
}

/** A read function a session polls: its type and config (parameters substituted). */
export interface PolledRead {
  type: string;
  config: Record<string, unknown>;
}

/** What one polled read gave: its value, or the error of that read alone. */
export type ReadOutcome = { value: DriverValue } | { error: unknown };

/** Reads a fixed set of polled reads together, in as few device requests as the protocol allows. */
export interface BatchReader {
  /** One poll of every read: one outcome a read, in the order the reads were given. */
  read(): Promise<ReadOutcome[]>;
}

/** Called once a device request of a batch (its duration and how it ended), for the metrics. */
export type RequestObserver = (durationMs: number, outcome: 'ok' | 'error' | 'timeout') => void;

/** A node a browse found (OPC UA): what the console shows and picks. */
export interface BrowsedNode {
  nodeId: string;
  /** The qualified name as OPC UA writes it (`1:Press4`). */
  browseName: string;
  displayName: string;
  /** `Object`, `Variable` ... */
  nodeClass: string;
  /** A variable's data type by name (`Double`); null for other nodes. */
  dataType: string | null;
  hasChildren: boolean;
}

/** An open session to a device: runs functions until closed. */
export interface DriverSession {
  /** A page of a node's children (its hierarchical references to objects and variables), for browsing. */
  browse?(
    nodeId: string,
    page: { offset: number; limit: number },
  ): Promise<{ children: BrowsedNode[]; total: number }>;
  /** The browse names from the Objects folder down to the node (`['Plant1', 'Press4', 'Temperature']`). */
  browsePath?(nodeId: string): Promise<string[]>;
  /** Runs a read or write function (its config with parameters already substituted). */
  execute(type: string, config: Record<string, unknown>): Promise<DriverValue>;
  /**
   * Polls reads of one interval together (Modbus block reads); the reader keeps what it learnt
   * between polls (a block split around an address the device refuses). Without it, each read is
   * an execute of its own.
   */
  batch?(reads: PolledRead[], observe: RequestObserver): BatchReader;
  /** Starts a subscribe function; resolves with its stop. */
  subscribe?(
    type: string,
    config: Record<string, unknown>,
    listener: SubscriptionListener,
  ): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

/** What a session is opened with besides its config. */
export interface DriverContext {
  /** Where a driver may keep files (OPC UA's certificate store). */
  dataDir: string;
  /**
   * A read-only connection: the session refuses every write where it would leave for the device
   * (see readOnlyRefusal), whatever function asked for it; a SQL session runs each call in a
   * read-only transaction that it rolls back.
   */
  readOnly: boolean;
  /** Every socket a session opens goes where this policy allowed it to (see driver-egress.ts). */
  egress: EgressPolicy;
}

/** A host and port a config points at, with the field that holds it (checked when a config is saved). */
export interface ConfigTarget {
  /** e.g. `config.host`, `config.endpointUrl`. */
  field: string;
  host: string;
  port: number;
}

export interface ProtocolDriver {
  id: string;
  name: string;
  category: 'industrial' | 'messaging' | 'web' | 'database';
  /** Whether a device accepts only a few sessions, so one replica runs the connection. */
  session: 'exclusive' | 'pooled';
  configSchema: JsonSchema;
  functionTypes: FunctionType[];
  /**
   * Where a (schema-valid) config connects to, field by field: refused when saved if the egress policy
   * denies it as written. Every socket a session opens is checked again when it opens.
   */
  targets(config: Record<string, unknown>): ConfigTarget[];
  connect(
    config: Record<string, unknown>,
    events: SessionEvents,
    context: DriverContext,
  ): Promise<DriverSession>;
}

/** Why a session could not be opened or a request failed, for the supervisor and the API. */
export type DriverErrorKind = 'authentication' | 'configuration' | 'transport' | 'timeout' | 'device';

/**
 * What a person is told went wrong when a session could not be opened (see connect-failure.ts): set by
 * a driver that knows (an OPC UA endpoint refusing the security asked for), else worked out from the
 * error's kind and the system error code it carries.
 */
export type FailureReason =
  | 'host_not_found'
  | 'connection_refused'
  | 'timed_out'
  | 'host_unreachable'
  | 'security_rejected'
  | 'authentication_failed'
  | 'egress_denied'
  | 'configuration'
  | 'device'
  | 'transport';

/** A failure a driver understood: the kind decides whether the supervisor retries. */
export class DriverError extends Error {
  constructor(
    readonly kind: DriverErrorKind,
    message: string,
    /** What went wrong when the driver knows better than the kind says; and the error underneath. */
    readonly detail: { reason?: FailureReason; cause?: unknown } = {},
  ) {
    super(message, detail.cause === undefined ? undefined : { cause: detail.cause });
    this.name = 'DriverError';
  }
}

/** The error of a write asked of a read-only session: raised where the write would reach the device. */
export function readOnlyRefusal(what: string): DriverError {
  return new DriverError('configuration', `the connection is read-only: ${what} is refused`);
}

/** The kind of any error: a DriverError's own, otherwise `transport`. */
export function errorKind(error: unknown): DriverErrorKind {
  return error instanceof DriverError ? error.kind : 'transport';
}

/** A message safe to show: the error's message, at most 500 characters. */
export function errorMessage(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.length > 500 ? `${text.slice(0, 500)}…` : text;
}

/** Rejects with a `timeout` DriverError when `promise` takes longer than `ms`. */
export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DriverError('timeout', `${what} timed out after ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
