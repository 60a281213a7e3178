import { EgressDeniedError, type EgressTarget } from '../../../platform/egress/egress-pinning.js';
import { type ConfigTarget, type DriverContext, DriverError } from './driver.js';

/**
 * Looks a session's host up once and checks it against the egress policy: the target to connect to,
 * pinned to the addresses that were checked. A denial is a `configuration` error naming the policy (the
 * connection ends in `error`, not retried); a lookup that fails is a `transport` error (DNS may recover).
 */
export async function checkedTarget(
  context: DriverContext,
  host: string,
  port: number,
): Promise<EgressTarget> {
  try {
    return await context.egress.resolve(host, port);
  } catch (error) {
    if (error instanceof EgressDeniedError)
      throw new DriverError('configuration', error.message, { reason: 'egress_denied' });
    const code = (error as { code?: string }).code;
    throw new DriverError('transport', `cannot resolve ${host}: ${code ?? (error as Error).message}`, {
      cause: error,
    });
  }
}

/** The target of a URL field: its host and port (the scheme's default when none is written). */
export function urlTarget(field: string, value: unknown, defaultPorts: Record<string, number>): ConfigTarget {
  try {
    const url = new URL(String(value));
    return { field, host: url.hostname, port: Number(url.port) || defaultPorts[url.protocol] || 0 };
  } catch {
    return { field, host: '', port: 0 };
  }
}

/** The targets of a config whose `host` and `port` fields (default `defaultPort`) name the device. */
export function hostTargets(defaultPort: number) {
  return (config: Record<string, unknown>): ConfigTarget[] => [
    {
      field: 'config.host',
      host: String(config.host),
      port: (config.port as number | undefined) ?? defaultPort,
    },
  ];
}
