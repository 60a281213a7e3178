/**
 * MQTT QoS 0 publishes historized per second by Meridian's embedded broker, against aedes alone
 * relaying the same messages to one subscriber, in the same run. Meridian relays a message only after
 * its value is committed, so the subscriber's count is also the committed count; the stored row count
 * is checked afterwards (no value lost). Meridian has this process to itself, aedes one of its own
 * (aedes-alone.ts), and the publisher and the subscriber run in a third (mqtt-clients.ts).
 *   node --import tsx bench/uns/mqtt.bench.ts [sqlite|postgres] [messages]
 */
import type { DialectName } from '../../src/storage/database.js';
import { freePort } from '../../test/helpers/free-port.js';
import { spawnAedesAlone } from './aedes-alone.js';
import { report, startBenchServer } from './bench-server.js';
import { runMqttClients } from './mqtt-clients.js';

const dialect = (process.argv[2] ?? 'sqlite') as DialectName;
const messages = Number(process.argv[3] ?? 50_000);
const rounds = 2;

// Alternating rounds against two running brokers, so that a burst of other load hits both alike.
const aedes = await spawnAedesAlone();
const bench = await startBenchServer(dialect, { mqttPort: await freePort() });
const meridianUrl = `mqtt://127.0.0.1:${bench.server.app.uns.broker.status().address?.split(':').pop()}`;
const baselineRates: number[] = [];
const rates: number[] = [];
try {
  for (let round = 0; round < rounds; round++) {
    baselineRates.push(await runMqttClients(aedes.url, {}, messages, round));
    rates.push(
      await runMqttClients(meridianUrl, { username: bench.orgId, password: bench.token }, messages, round),
    );
    await bench.server.app.uns.committer.drain();
  }
  const stored = Number(
    (
      await bench.server.storage.db
        .selectFrom('uns_values')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirst()
    )?.n ?? 0,
  );
  const stats = bench.server.app.uns.committer.stats;
  const mean = (list: number[]) => list.reduce((sum, n) => sum + n, 0) / list.length;
  const sent = rounds * messages;
  console.log(
    `MQTT QoS 0 [${dialect}], ${rounds} alternating rounds of ${messages} messages, one publisher, one subscriber`,
  );
  console.log(`  group commit: ${stats.transactions} transactions for ${stats.records} values`);
  console.log(`  stored values: ${stored} of ${sent} (${stored === sent ? 'none lost' : 'LOST VALUES'})`);
  console.log(
    `  rounds (msg/s): aedes ${baselineRates.map((r) => r.toFixed(0)).join(', ')}; Meridian ${rates.map((r) => r.toFixed(0)).join(', ')}`,
  );
  report('  historized/s', mean(rates), mean(baselineRates), 'msg/s', 0.8);
} finally {
  await bench.close();
  await aedes.stop();
}
