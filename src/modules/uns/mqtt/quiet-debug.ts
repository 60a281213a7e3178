import { createRequire } from 'node:module';
import { dirname } from 'node:path';

/** The `debug` package's factory, and the logger it makes for a namespace. */
type DebugFactory = (namespace: string) => DebugLogger;
type DebugLogger = ((...args: unknown[]) => void) & { enabled: boolean; namespace: string };

/** Namespaces given a logger that does nothing, for the tests and for anyone wondering. */
export const quietNamespaces = new Set<string>();

/**
 * The `debug` factory, making a logger that does nothing at all for each namespace that is off when the
 * logger is made: the DEBUG environment variable at start-up decides, as it does for `debug` itself
 * (`DEBUG=mqtt-packet:* meridian serve` still prints; enabling a namespace later from code does not).
 * A logger of `debug` works only when enabled, but each call still gathers its arguments into an array
 * and asks its `enabled` getter. mqtt-packet calls one several times for every packet it parses or
 * writes: 0.9 KB of garbage a message, and 1.5-2 µs of the embedded broker's 11-12 µs a historized
 * QoS 0 message (three alternating runs of bench/uns/mqtt.bench.ts's Meridian side).
 */
export function quietDebug(factory: DebugFactory): DebugFactory {
  return new Proxy(factory, {
    apply(target, self, args: [string]) {
      const logger = Reflect.apply(target, self, args) as DebugLogger;
      if (logger.enabled) return logger;
      quietNamespaces.add(logger.namespace);
      return Object.assign(() => {}, { enabled: false, namespace: logger.namespace });
    },
  });
}

const require = createRequire(import.meta.url);
let installed = false;

/**
 * Replaces the `debug` module in Node's module cache by `quietDebug` of it, so that the packages loaded
 * after this (mqtt-packet, which aedes and mqtt.js load, and mqtt.js) make their loggers with it. The
 * broker modules import this module before aedes and mqtt; the bundle keeps `debug` external
 * (scripts/bundle.mjs) so that it too loads it through the cache. Idempotent.
 */
function installQuietDebug(): void {
  if (installed) return;
  installed = true;
  const path = require.resolve('debug', { paths: [dirname(require.resolve('mqtt-packet'))] });
  require(path);
  const cached = require.cache[path];
  if (cached) cached.exports = quietDebug(cached.exports as DebugFactory);
}

installQuietDebug();
