import type { InvalidationBus } from '../../../platform/invalidation-bus.js';
import { watchStanding } from '../../users/standing-watch.js';
import type { MqttIdentity, TokenAuthenticator } from './mqtt-auth.js';

export interface SessionWatchDeps {
  authenticate: TokenAuthenticator;
  bus: InvalidationBus;
  /** How often an open session's credential is checked again (MERIDIAN_MQTT_SESSION_RECHECK). */
  intervalMs: number;
  now: () => number;
  onError: (error: unknown) => void;
}

/** What an MQTT session was opened with: checked again with the rules of CONNECT. */
export interface WatchedCredential {
  token: string;
  organizationId: string;
  remoteAddress: string;
  identity: MqttIdentity;
}

/**
 * Keeps checking that the credential an MQTT connection authenticated with still admits it, with
 * exactly the rules of CONNECT (`mqtt-auth.ts`): the token verifies (not revoked, not expired), the
 * account is active, the organization active and the user a member (or a System Administrator). Checks
 * every `intervalMs`, at the credential's expiry, and at once when the bus announces a change of the
 * user, the organization or the membership (from any replica). A role change narrows or widens the
 * session's scopes (`onScopes`); `onLost` is called once, with the reason, when access is gone. A check
 * that fails for another reason (storage down) is retried at the next tick. Returns the function that
 * stops watching. The same rules as the live streams' `watchAccess`, without an HTTP request.
 */
export function watchMqttSession(
  deps: SessionWatchDeps,
  credential: WatchedCredential,
  onScopes: (identity: MqttIdentity) => void,
  onLost: (reason: string) => void,
): () => void {
  const { identity } = credential;
  let stopped = false;
  const stop = watchStanding({
    bus: deps.bus,
    intervalMs: deps.intervalMs,
    now: deps.now,
    onError: deps.onError,
    userId: identity.userId,
    organizationId: identity.organizationId,
    expiresAt: identity.expiresAt,
    reasonToClose: async () => {
      const current = await deps.authenticate(
        credential.token,
        credential.organizationId,
        credential.remoteAddress,
      );
      if (typeof current === 'string') return current;
      if (!stopped) onScopes(current);
      return null;
    },
    onLost: (reason) => {
      stopped = true;
      onLost(reason);
    },
  });
  return () => {
    stopped = true;
    stop();
  };
}
