/**
 * Sparkplug B topics (Sparkplug 3.0, section 4.1): `spBv1.0/<group_id>/<message_type>/<edge_node_id>[/<device_id>]`
 * and a host application's `spBv1.0/STATE/<host_id>`.
 */

export const SPARKPLUG_NAMESPACE = 'spBv1.0';

export type NodeMessageType = 'NBIRTH' | 'NDEATH' | 'NDATA' | 'NCMD';
export type DeviceMessageType = 'DBIRTH' | 'DDEATH' | 'DDATA' | 'DCMD';
export type MessageType = NodeMessageType | DeviceMessageType;

const NODE_TYPES: ReadonlySet<string> = new Set<NodeMessageType>(['NBIRTH', 'NDEATH', 'NDATA', 'NCMD']);
const DEVICE_TYPES: ReadonlySet<string> = new Set<DeviceMessageType>(['DBIRTH', 'DDEATH', 'DDATA', 'DCMD']);

export type SparkplugTopic =
  | { kind: 'node'; groupId: string; type: NodeMessageType; edgeNodeId: string }
  | { kind: 'device'; groupId: string; type: DeviceMessageType; edgeNodeId: string; deviceId: string }
  | { kind: 'state'; hostId: string };

/**
 * An identifier (group, edge node, device, host) is a non-empty UTF-8 string without the MQTT wildcards
 * and separator (tck-id-intro-group-id-chars, -edge-node-id-chars, -device-id-chars).
 */
export function isSparkplugId(id: string): boolean {
  return id.length > 0 && !/[+#/]/.test(id);
}

/** The parts of a Sparkplug topic, or why it is not one. */
export function parseSparkplugTopic(topic: string): SparkplugTopic | { error: string } {
  const parts = topic.split('/');
  if (parts[0] !== SPARKPLUG_NAMESPACE) return { error: `not in the ${SPARKPLUG_NAMESPACE} namespace` };
  if (parts[1] === 'STATE') {
    if (parts.length !== 3 || !isSparkplugId(parts[2]!))
      return { error: 'STATE topics are spBv1.0/STATE/<host_id>' };
    return { kind: 'state', hostId: parts[2]! };
  }
  const [, groupId, type, edgeNodeId, deviceId] = parts;
  if (groupId === undefined || type === undefined || edgeNodeId === undefined) {
    return { error: 'a Sparkplug topic is spBv1.0/<group_id>/<message_type>/<edge_node_id>[/<device_id>]' };
  }
  for (const [what, id] of [
    ['group_id', groupId],
    ['edge_node_id', edgeNodeId],
  ] as const) {
    if (!isSparkplugId(id)) return { error: `${what} must be non-empty and hold no '+', '#' or '/'` };
  }
  if (NODE_TYPES.has(type)) {
    if (parts.length !== 4) return { error: `${type} topics have no device_id` };
    return { kind: 'node', groupId, type: type as NodeMessageType, edgeNodeId };
  }
  if (DEVICE_TYPES.has(type)) {
    if (parts.length !== 5 || deviceId === undefined || !isSparkplugId(deviceId)) {
      return { error: `${type} topics end in a device_id, non-empty and without '+', '#' or '/'` };
    }
    return { kind: 'device', groupId, type: type as DeviceMessageType, edgeNodeId, deviceId };
  }
  return { error: `unknown message type ${JSON.stringify(type)}` };
}

/** `spBv1.0/<group>/NCMD/<node>`: where a host sends a node its commands (a rebirth request). */
export function nodeCommandTopic(groupId: string, edgeNodeId: string): string {
  return `${SPARKPLUG_NAMESPACE}/${groupId}/NCMD/${edgeNodeId}`;
}

/** `spBv1.0/STATE/<host_id>`: a host application's retained birth and will. */
export function stateTopic(hostId: string): string {
  return `${SPARKPLUG_NAMESPACE}/STATE/${hostId}`;
}
