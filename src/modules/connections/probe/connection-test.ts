import type { EgressPolicy } from '../../../platform/egress/egress-policy.js';
import { withSecretValues } from '../connections/connection-secrets.js';
import { explainFailure } from '../drivers/connect-failure.js';
import { DriverError, type DriverSession, type FailureReason } from '../drivers/driver.js';
import { splitCheckedConfig } from '../protocols/egress-targets.js';
import { protocolOf } from '../protocols/protocol-registry.js';

/** The answer of a connection test. */
export interface ConnectionTestResult {
  success: boolean;
  durationMs: number;
  /** What went wrong, as a person reads it (`connection refused: ...`); null on success. */
  error: string | null;
  /** The same as a stable code (`host_not_found`, `connection_refused`, `timed_out` ...); null on success. */
  reason: FailureReason | null;
}

export interface ConnectionTestDeps {
  egress: EgressPolicy;
  /** Where a driver may keep files (OPC UA's certificate store). */
  dataDir: string;
}

/** The longest a test waits for a session, whatever the config's own timeout says. */
export const MAX_TEST_MS = 30_000;

/**
 * Opens a session with the given settings and closes it at once; stores nothing. The config is
 * checked as a save checks it (400 naming the field; an address the egress policy denies as written,
 * 400 too) and the session's sockets pass the egress policy as a running connection's do. The
 * session is read-only, and no function runs: nothing reaches the device but the handshake. The secrets
 * given are used for this session only, never stored, never logged, and blanked out of the error.
 */
export async function testConnection(
  protocol: string,
  rawConfig: Record<string, unknown>,
  deps: ConnectionTestDeps,
): Promise<ConnectionTestResult> {
  const { config, secrets } = await splitCheckedConfig(protocol, rawConfig, {}, deps.egress);
  const driver = protocolOf(protocol).driver;
  const configured = Number(config.timeoutMs);
  const limitMs = Math.min(Number.isFinite(configured) && configured > 0 ? configured : 10_000, MAX_TEST_MS);
  const started = performance.now();
  const elapsed = () => Math.round((performance.now() - started) * 100) / 100;
  const opening = driver.connect(
    withSecretValues(config, secrets),
    { onLost: () => {} },
    { dataDir: deps.dataDir, readOnly: true, egress: deps.egress },
  );
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    // The driver's own timeout answers first; this one bounds a driver that has none for some step.
    timer = setTimeout(
      () => reject(new DriverError('timeout', `no session within ${limitMs + 2000} ms`)),
      limitMs + 2000,
    );
  });
  try {
    const session: DriverSession = await Promise.race([opening, late]);
    await session.close().catch(() => {});
    return { success: true, durationMs: elapsed(), error: null, reason: null };
  } catch (error) {
    // A session that opens after the answer was given is closed as soon as it does.
    opening.then((session) => session.close().catch(() => {})).catch(() => {});
    const explained = explainFailure(error, Object.values(secrets).map(String));
    return { success: false, durationMs: elapsed(), error: explained.message, reason: explained.reason };
  } finally {
    clearTimeout(timer);
  }
}
