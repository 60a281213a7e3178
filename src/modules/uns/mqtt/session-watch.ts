import type { InvalidationBus } from '../../../platform/invalidation-bus.js';
import { STANDING_TOPICS } from '../../users/access-directory.js';
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

/** The longest delay setTimeout takes; a PAT may expire a year ahead. */
const MAX_TIMER_MS = 2 ** 31 - 1;

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
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let running = false;
  let again = false;

  const reasonToClose = async (): Promise<string | null> => {
    if (identity.expiresAt !== undefined && identity.expiresAt <= deps.now()) {
      return 'the credential has expired';
    }
    const current = await deps.authenticate(
      credential.token,
      credential.organizationId,
      credential.remoteAddress,
    );
    if (typeof current === 'string') return current;
    if (!stopped) onScopes(current);
    return null;
  };

  const schedule = () => {
    clearTimeout(timer);
    if (stopped) return;
    let delay = deps.intervalMs;
    if (identity.expiresAt !== undefined) delay = Math.min(delay, identity.expiresAt - deps.now());
    timer = setTimeout(check, Math.min(MAX_TIMER_MS, Math.max(0, delay)));
    timer.unref();
  };

  const check = async () => {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = true;
    try {
      const reason = await reasonToClose();
      if (reason !== null && !stopped) {
        stop();
        onLost(reason);
        return;
      }
    } catch (error) {
      deps.onError(error);
    } finally {
      running = false;
    }
    if (again) {
      again = false;
      void check();
    } else schedule();
  };

  const organizationId = identity.organizationId;
  const unsubscribe = deps.bus.subscribe((event) => {
    const concerns =
      event.topic === '*' ||
      (event.topic === STANDING_TOPICS.user && event.id === identity.userId) ||
      (event.topic === STANDING_TOPICS.organization && event.id === organizationId) ||
      (event.topic === STANDING_TOPICS.membership && event.id === `${identity.userId}|${organizationId}`);
    if (concerns) void check();
  });

  const stop = () => {
    stopped = true;
    clearTimeout(timer);
    unsubscribe();
  };
  schedule();
  return stop;
}
