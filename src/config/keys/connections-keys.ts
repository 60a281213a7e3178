import type { ConfigKeyDescriptor } from '../config-key.js';

/** Connections: the egress policy every outbound connection of a connection passes. */
export const CONNECTION_KEYS = {
  egressAllow: {
    env: 'MERIDIAN_EGRESS_ALLOW',
    kind: 'egress',
    description:
      "Where connections may go that the egress policy denies by default: comma-separated CIDRs (10.0.0.0/8, fd00::/8), addresses, host names, *.names, each with an optional :port (127.0.0.1:5020, [::1]:4840, plc.lab:502). An entry without a port lifts the default denials (loopback, link-local and cloud metadata, the hosts of DATABASE_URL and MQTT_URL) for its addresses; Meridian's own ports and the ports of DATABASE_URL's and MQTT_URL's servers only for an entry that names the port. Unset: only the defaults.",
  },
  egressDeny: {
    env: 'MERIDIAN_EGRESS_DENY',
    kind: 'egress',
    description:
      'Where no connection may go, over MERIDIAN_EGRESS_ALLOW and the private ranges the policy allows by default: the same forms as MERIDIAN_EGRESS_ALLOW (e.g. 10.20.0.0/16 for an office network, or 192.168.1.10:22).',
  },
} as const satisfies Record<string, ConfigKeyDescriptor>;
