import { normalizeHost } from '../../../platform/egress/egress-addresses.js';
import type { EgressPolicy } from '../../../platform/egress/egress-policy.js';
import { badRequest } from '../../../platform/errors.js';
import { type Secrets, splitConfig } from '../connections/connection-secrets.js';
import { protocolOf } from './protocol-registry.js';

/**
 * Refuses (400, naming the field and the egress policy) a config whose target is not a host at all (a
 * Unix socket path, which pg would open) or is an address the egress policy denies as written: an IP
 * literal or `localhost`. A name is judged when a session resolves it, never when it is saved (no
 * lookup on behalf of whoever saves it).
 */
export async function checkConfigTargets(
  protocol: string,
  config: Record<string, unknown>,
  egress: EgressPolicy,
): Promise<void> {
  for (const target of protocolOf(protocol).driver.targets(config)) {
    if (!normalizeHost(target.host))
      throw badRequest(`${target.field} must name a host name or an IP address`);
    const denial = await egress.literalDenial(target.host, target.port);
    if (denial) throw badRequest(`${target.field}: ${denial}`);
  }
}

/** splitConfig (validation, secrets apart), then checkConfigTargets on the whole config. */
export async function splitCheckedConfig(
  protocol: string,
  config: Record<string, unknown>,
  previous: Secrets,
  egress: EgressPolicy,
): Promise<ReturnType<typeof splitConfig>> {
  const split = splitConfig(protocol, config, previous);
  await checkConfigTargets(protocol, { ...split.config, ...split.secrets }, egress);
  return split;
}
