/**
 * The clock of receipt times, which stand for a value's timestamp when its publisher declared none:
 * epoch milliseconds with microsecond fractions, strictly increasing by at least a microsecond a call.
 * The historian keys values by topic and timestamp, and a repeated (topic, timestamp) replaces the
 * earlier value (an idempotent retry); two values published without a timestamp in the same millisecond
 * would otherwise share one, and the second would silently replace an acknowledged first. One clock
 * serves HTTP, batch and MQTT publishes of the process.
 */
export function createReceiptClock(nowMs: () => number): () => number {
  let lastUs = 0;
  return () => {
    const us = Math.round(nowMs() * 1000);
    lastUs = us > lastUs ? us : lastUs + 1;
    return lastUs / 1000;
  };
}
