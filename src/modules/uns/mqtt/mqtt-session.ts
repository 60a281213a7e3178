/**
 * Who an embedded-broker connection is, once authenticated: its identity and its organization's topic
 * namespace, kept on aedes' client object (embedded-broker.ts reads it on every publish and delivery).
 */
import type { Client } from 'aedes';
import type { MqttIdentity } from './mqtt-auth.js';

/**
 * Internal topic namespace of an organization. Clients publish and subscribe `v1/...`; the broker maps
 * it to `o/<organization id>/v1/...` and strips it again on delivery, so an organization's clients see
 * only its own topics, whatever filter they subscribe.
 */
export const namespaceOf = (organizationId: string) => `o/${organizationId}/`;

/** An authenticated MQTT connection: who it is, and its organization's namespace. */
export interface MqttSession {
  identity: MqttIdentity;
  namespace: string;
  /** Why access is gone (set once, then the connection is closed): nothing more is accepted or sent. */
  lost: string | null;
}

/**
 * The broker's client id of a connection: the client's own id within its organization, so that a
 * client of one organization never takes over (disconnects) or resumes the session of another's.
 */
export const brokerClientId = (organizationId: string, clientId: string) => `${organizationId}/${clientId}`;

/** Whether a session may still publish or be sent values: access not lost, credential not expired. */
export const admitted = (session: MqttSession, now: number) =>
  session.lost === null && (session.identity.expiresAt === undefined || session.identity.expiresAt > now);

/**
 * Where a connection keeps its session: a property of aedes' client, set once it is authenticated, read
 * on every publish and every delivery.
 */
export const SESSION = Symbol('meridian mqtt session');
export type SessionClient = Client & { [SESSION]?: MqttSession };
export const sessionOf = (client: Client | null): MqttSession | undefined =>
  client ? (client as SessionClient)[SESSION] : undefined;
