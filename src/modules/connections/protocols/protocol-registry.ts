import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { badRequest } from '../../../platform/errors.js';
import { describeValidationError } from '../../../platform/validation.js';
import type { FunctionDirection, FunctionType, ProtocolDriver } from '../drivers/driver.js';
import { modbusTcpDriver } from '../drivers/modbus/modbus-tcp.driver.js';
import { mqttDriver } from '../drivers/mqtt.driver.js';
import { mysqlDriver } from '../drivers/mysql.driver.js';
import { opcuaDriver } from '../drivers/opcua.driver.js';
import { postgresqlDriver } from '../drivers/postgresql.driver.js';
import { restDriver } from '../drivers/rest.driver.js';
import { s7Driver } from '../drivers/s7/s7.driver.js';

const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (
  ajv: Ajv,
) => Ajv;

/** Every protocol Meridian speaks, one driver file each. */
export const DRIVERS: readonly ProtocolDriver[] = [
  opcuaDriver,
  modbusTcpDriver,
  mqttDriver,
  s7Driver,
  restDriver,
  postgresqlDriver,
  mysqlDriver,
];

// Our own schemas (no user-written pattern reaches this Ajv); `x-secret` is an annotation.
const ajv = new Ajv({ strict: false, allErrors: false, useDefaults: false, coerceTypes: false });
addFormats(ajv);

// Function configs are checked before their placeholders have values: every error is needed, to
// set aside those at a placeholder (see checkFunctionConfig).
const ajvAll = new Ajv({ strict: false, allErrors: true, useDefaults: false, coerceTypes: false });
addFormats(ajvAll);

/** Where a protocol's config holds secrets: see connections/connection-secrets.ts. */
export interface SecretLayout {
  /** Fields marked `x-secret`: the value is a secret. */
  secretFields: string[];
  /** Object fields whose values are marked `x-secret` (REST `headers`): each value is a secret, the names are not. */
  secretMaps: string[];
  /**
   * URL fields marked `x-url-credentials`: a `user:password@` in them is moved to the protocol's
   * `username` and (secret) `password` fields when the config is saved.
   */
  credentialUrls: string[];
}

interface CompiledProtocol extends SecretLayout {
  driver: ProtocolDriver;
  validateConfig: ValidateFunction;
  functionTypes: Map<
    string,
    { type: FunctionType; validate: ValidateFunction; validateAll: ValidateFunction }
  >;
}

const compiled = new Map<string, CompiledProtocol>();
for (const driver of DRIVERS) {
  const properties = (driver.configSchema.properties ?? {}) as Record<string, Record<string, unknown>>;
  const marked = (test: (property: Record<string, unknown>) => boolean) =>
    Object.keys(properties).filter((name) => test(properties[name]!));
  const credentialUrls = marked((p) => p['x-url-credentials'] === true);
  // A URL's credentials land in username and a secret password: a protocol marking one has both.
  if (credentialUrls.length > 0 && (!properties.username || properties.password?.['x-secret'] !== true))
    throw new Error(`${driver.id}: x-url-credentials needs a username field and an x-secret password`);
  compiled.set(driver.id, {
    driver,
    validateConfig: ajv.compile(driver.configSchema),
    secretFields: marked((p) => p['x-secret'] === true),
    secretMaps: marked(
      (p) => (p.additionalProperties as Record<string, unknown> | undefined)?.['x-secret'] === true,
    ),
    credentialUrls,
    functionTypes: new Map(
      driver.functionTypes.map((t) => [
        t.type,
        { type: t, validate: ajv.compile(t.configSchema), validateAll: ajvAll.compile(t.configSchema) },
      ]),
    ),
  });
}

/** The protocol with this id, or 400 naming `field`. */
export function protocolOf(id: string, field = 'protocol'): CompiledProtocol {
  const protocol = compiled.get(id);
  if (!protocol) {
    throw badRequest(
      `${field} '${id.slice(0, 50)}' is not a supported protocol; GET /api/v1/connections/protocols lists them`,
    );
  }
  return protocol;
}

/** The direction of a function type of a protocol; undefined when either is unknown. */
export function functionDirection(
  protocol: string | null | undefined,
  type: string,
): FunctionDirection | undefined {
  if (!protocol) return undefined;
  return compiled.get(protocol)?.functionTypes.get(type)?.type.direction;
}

/** Throws 400 naming the first wrong field under `prefix` (e.g. `config.port must be integer`). */
export function assertValid(validate: ValidateFunction, value: unknown, prefix: string): void {
  if (validate(value)) return;
  const errors = (validate.errors ?? []).map((e: ErrorObject) => ({
    ...e,
    instancePath: `/${prefix}${e.instancePath}`,
  }));
  throw badRequest(describeValidationError(errors, 'body'));
}

/**
 * Checks a function config whose placeholders hold sample values of their declared types: a type
 * error anywhere is refused (a string parameter where a number belongs), but a rule about the value
 * itself (enum, range, pattern) at a placeholder waits for the execute, which checks the real value.
 */
export function checkFunctionConfig(
  validateAll: ValidateFunction,
  sampled: unknown,
  placeholderPointers: Set<string>,
): void {
  if (validateAll(sampled)) return;
  const errors = (validateAll.errors ?? []).filter(
    (e: ErrorObject) => e.keyword === 'type' || !placeholderPointers.has(e.instancePath),
  );
  if (errors.length === 0) return;
  throw badRequest(
    describeValidationError(
      errors.map((e) => ({ ...e, instancePath: `/config${e.instancePath}` })),
      'body',
    ),
  );
}
