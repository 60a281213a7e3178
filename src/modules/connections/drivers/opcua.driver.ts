import type { ClientSubscription, DataType, DataValue, StatusCode } from 'node-opcua';
import {
  DriverError,
  type DriverSession,
  type DriverValue,
  type ProtocolDriver,
  type Quality,
  readOnlyRefusal,
} from './driver.js';
import { urlTarget } from './driver-egress.js';
import { browseChildren, browsePathOf, browsePathsOf } from './opcua-browse.js';
import { OPCUA_PORTS } from './opcua-egress.js';
import { openSession, SECURITY_MODES, SECURITY_POLICIES } from './opcua-session.js';

const nodeId = {
  type: 'string',
  minLength: 1,
  maxLength: 4096,
  description: 'Node id, e.g. ns=1;s=Press4.Temperature or i=2258.',
};

/** OPC UA status code severity (Part 4 §7.34.1, top two bits) to the UNS quality: Good 0, Uncertain 1, Bad 2. */
export function qualityOfStatus(statusCode: StatusCode): Quality {
  const severity = (statusCode.value >>> 30) & 3;
  return severity === 0 ? 0 : severity === 1 ? 1 : 2;
}

function driverValue(dataValue: DataValue): DriverValue {
  const value = dataValue.value?.value;
  return {
    value: ArrayBuffer.isView(value) ? Array.from(value as unknown as ArrayLike<number>) : (value ?? null),
    quality: qualityOfStatus(dataValue.statusCode),
    ...(dataValue.sourceTimestamp ? { timestamp: dataValue.sourceTimestamp } : {}),
  };
}

const DATA_TYPES = [
  'Boolean',
  'SByte',
  'Byte',
  'Int16',
  'UInt16',
  'Int32',
  'UInt32',
  'Int64',
  'UInt64',
  'Float',
  'Double',
  'String',
  'DateTime',
  'ByteString',
] as const;

/** node-opcua, loaded with the first OPC UA session: it is large and prints a warning when loaded. */
const loadOpcua = () => import('node-opcua');

/** OPC UA through node-opcua: read, write, browse and subscriptions. */
export const opcuaDriver: ProtocolDriver = {
  id: 'opcua',
  name: 'OPC UA',
  category: 'industrial',
  session: 'exclusive',
  configSchema: {
    type: 'object',
    required: ['endpointUrl'],
    additionalProperties: false,
    properties: {
      endpointUrl: {
        type: 'string',
        pattern: '^opc\\.tcp://',
        maxLength: 2048,
        'x-url-credentials': true,
        description: 'A user:password@ in it is moved to username and password when saved.',
      },
      securityMode: { type: 'string', enum: SECURITY_MODES, default: 'None' },
      securityPolicy: { type: 'string', enum: SECURITY_POLICIES, default: 'None' },
      username: { type: 'string', minLength: 1, maxLength: 255, description: 'Absent: anonymous.' },
      password: { type: 'string', maxLength: 1024, 'x-secret': true },
      timeoutMs: { type: 'integer', minimum: 500, maximum: 120000, default: 10000 },
    },
  },
  functionTypes: [
    {
      type: 'opcua.read',
      direction: 'read',
      description: 'Reads the Value attribute of a node.',
      configSchema: {
        type: 'object',
        required: ['nodeId'],
        additionalProperties: false,
        properties: { nodeId },
      },
    },
    {
      type: 'opcua.write',
      direction: 'write',
      description: "Writes the Value attribute; the data type is the node's own unless given.",
      configSchema: {
        type: 'object',
        required: ['nodeId', 'value'],
        additionalProperties: false,
        properties: {
          nodeId,
          value: { description: 'The value to write.' },
          dataType: { type: 'string', enum: DATA_TYPES },
        },
      },
    },
    {
      type: 'opcua.browse',
      direction: 'read',
      description: 'Lists the references of a node (browse name, node id, node class).',
      configSchema: {
        type: 'object',
        additionalProperties: false,
        properties: { nodeId: { ...nodeId, default: 'i=85' } },
      },
    },
    {
      type: 'opcua.subscribe',
      direction: 'subscribe',
      description:
        "Monitors the Value attribute of each node; every change is a value, published to the item's topic in uns.items or else to <topic>/<browse path> (Plant1/Press4/Temperature, read from the server when the subscription starts).",
      configSchema: {
        type: 'object',
        required: ['nodeIds'],
        additionalProperties: false,
        properties: {
          nodeIds: { type: 'array', minItems: 1, maxItems: 100000, items: nodeId },
          samplingIntervalMs: { type: 'integer', minimum: 0, maximum: 3600000, default: 1000 },
          publishingIntervalMs: { type: 'integer', minimum: 10, maximum: 3600000, default: 1000 },
        },
      },
    },
  ],
  targets: (config) => [urlTarget('config.endpointUrl', config.endpointUrl, OPCUA_PORTS)],
  async connect(config, events, context) {
    const opcua = await loadOpcua();
    const { AttributeIds, ClientSubscription, DataType, TimestampsToReturn } = opcua;
    const endpointUrl = config.endpointUrl as string;
    const { client, session } = await openSession(opcua, config, context);
    let closing = false;
    client.on('connection_lost', () => {
      if (!closing) events.onLost(new DriverError('transport', `connection to ${endpointUrl} lost`));
    });
    session.on('session_closed', () => {
      if (!closing) events.onLost(new DriverError('transport', 'the server closed the session'));
    });
    const subscriptions = new Set<ClientSubscription>();

    const driverSession: DriverSession = {
      browse: (id, page) => browseChildren(opcua, session, id, page),
      browsePath: (id) => browsePathOf(opcua, session, id),
      async execute(type, cfg) {
        switch (type) {
          case 'opcua.read': {
            const dv = await session.read({ nodeId: cfg.nodeId as string, attributeId: AttributeIds.Value });
            return driverValue(dv);
          }
          case 'opcua.write': {
            if (context.readOnly) throw readOnlyRefusal(`writing ${String(cfg.nodeId)}`);
            let dataType = cfg.dataType ? DataType[cfg.dataType as keyof typeof DataType] : undefined;
            if (dataType === undefined) {
              const current = await session.read({
                nodeId: cfg.nodeId as string,
                attributeId: AttributeIds.DataType,
              });
              if (qualityOfStatus(current.statusCode) === 2) {
                throw new DriverError(
                  'device',
                  `cannot read the data type of ${String(cfg.nodeId)}: ${current.statusCode.name}`,
                );
              }
              dataType = (current.value.value as { value: number }).value as DataType;
            }
            const status = await session.write({
              nodeId: cfg.nodeId as string,
              attributeId: AttributeIds.Value,
              value: { value: { dataType: dataType as DataType, value: cfg.value } },
            });
            if (qualityOfStatus(status) !== 0)
              throw new DriverError('device', `write refused: ${status.name}`);
            return { value: cfg.value, quality: 0 };
          }
          case 'opcua.browse': {
            const result = await session.browse((cfg.nodeId as string) ?? 'i=85');
            if (qualityOfStatus(result.statusCode) === 2)
              throw new DriverError('device', `browse failed: ${result.statusCode.name}`);
            const references = (result.references ?? []).map((r) => ({
              browseName: r.browseName.toString(),
              nodeId: r.nodeId.toString(),
              nodeClass: r.nodeClass,
            }));
            return { value: { references }, quality: 0 };
          }
          default:
            throw new DriverError('configuration', `unknown function type ${type}`);
        }
      },
      async subscribe(type, cfg, listener) {
        if (type !== 'opcua.subscribe') throw new DriverError('configuration', `${type} does not subscribe`);
        const subscription = ClientSubscription.create(session, {
          requestedPublishingInterval: (cfg.publishingIntervalMs as number) ?? 1000,
          requestedLifetimeCount: 100,
          requestedMaxKeepAliveCount: 10,
          maxNotificationsPerPublish: 0,
          publishingEnabled: true,
        });
        subscriptions.add(subscription);
        const nodeIds = cfg.nodeIds as string[];
        // Each item's topic is made from its browse path (Plant1/Press4/Temperature), read once here; a
        // server that refuses the walk still gets its subscription (items then named by node id).
        const paths = await browsePathsOf(opcua, session, nodeIds).catch(() => nodeIds.map(() => null));
        const group = await subscription.monitorItems(
          nodeIds.map((id) => ({ nodeId: id, attributeId: AttributeIds.Value })),
          {
            samplingInterval: (cfg.samplingIntervalMs as number) ?? 1000,
            discardOldest: true,
            queueSize: 10,
          },
          TimestampsToReturn.Both,
        );
        group.on('changed', (_item: unknown, dataValue: DataValue, index: number) => {
          listener(nodeIds[index]!, driverValue(dataValue), paths[index] ?? undefined);
        });
        return async () => {
          subscriptions.delete(subscription);
          await subscription.terminate().catch(() => {});
        };
      },
      async close() {
        closing = true;
        for (const s of subscriptions) await s.terminate().catch(() => {});
        await session.close().catch(() => {});
        await client.disconnect().catch(() => {});
      },
    };
    return driverSession;
  },
};
