import type { Actor } from '../../../platform/actor.js';
import type { EgressPolicy } from '../../../platform/egress/egress-policy.js';
import { badRequest, unavailable } from '../../../platform/errors.js';
import type { ConnectionsService } from '../connections/connections.service.js';
import { explainFailure } from '../drivers/connect-failure.js';
import { DriverError, type DriverSession } from '../drivers/driver.js';
import { OBJECTS_FOLDER } from '../drivers/opcua-browse.js';
import type { CreateFunctionBody } from '../functions/functions.schemas.js';
import type { FunctionsService } from '../functions/functions.service.js';
import { protocolOf } from '../protocols/protocol-registry.js';

/** What the picked nodes become: a read function each (polled), or one subscription with an item each. */
export interface PickBody {
  nodes: { nodeId: string }[];
  mode: 'read' | 'subscribe';
  /** The UNS topic the browse paths are appended to (`v1/acme/site1`). */
  topic: string;
  /** Read: how often each node is polled. */
  intervalMs?: number | undefined;
  /** Subscribe: the sampling and publishing intervals of the subscription. */
  samplingIntervalMs?: number | undefined;
  publishingIntervalMs?: number | undefined;
  /** Subscribe: the subscription function's name (default `Subscription <n> nodes under <topic>`). */
  name?: string | undefined;
}

/** Makes a browse name a topic segment: `/`, `+`, `#` and control characters become `_`, at most 128 characters. */
export function topicSegment(name: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it replaces
  const cleaned = name.replace(/[/+#\u0000-\u001f\u007f]/g, '_').slice(0, 128);
  return cleaned.length > 0 ? cleaned : '_';
}

export interface ConnectionBrowserDeps {
  connections: ConnectionsService;
  functions: FunctionsService;
  egress: EgressPolicy;
  dataDir: string;
}

/**
 * Browsing an OPC UA connection's address space, and making functions of what was picked. Each call
 * opens a read-only session of its own with the connection's saved settings (through the egress policy,
 * as a running connection's), and closes it: browsing never disturbs the running session's subscriptions.
 */
export class ConnectionBrowser {
  constructor(private readonly deps: ConnectionBrowserDeps) {}

  private async withSession<T>(
    organizationId: string,
    id: string,
    work: (session: DriverSession) => Promise<T>,
  ): Promise<T> {
    const connection = await this.deps.connections.get(organizationId, id);
    const driver = protocolOf(connection.protocol).driver;
    if (connection.protocol !== 'opcua')
      throw badRequest(
        `browse is for OPC UA connections; this connection's protocol is ${connection.protocol}`,
      );
    let session: DriverSession;
    try {
      session = await driver.connect(
        this.deps.connections.driverConfig(connection),
        { onLost: () => {} },
        { dataDir: this.deps.dataDir, readOnly: true, egress: this.deps.egress },
      );
    } catch (error) {
      throw unavailable(`the OPC UA server cannot be reached: ${explainFailure(error).message}`, 5);
    }
    try {
      return await work(session);
    } catch (error) {
      if (error instanceof DriverError && error.kind === 'configuration') throw badRequest(error.message);
      if (error instanceof DriverError) throw unavailable(`the OPC UA server failed: ${error.message}`, 5);
      throw error;
    } finally {
      await session.close().catch(() => {});
    }
  }

  /** A page of the children of `nodeId` (default: the Objects folder). */
  browse(
    organizationId: string,
    id: string,
    nodeId: string | undefined,
    page: { offset: number; limit: number },
  ) {
    return this.withSession(organizationId, id, (session) => session.browse!(nodeId ?? OBJECTS_FOLDER, page));
  }

  /**
   * Functions for the picked nodes, in one transaction: a read function per node polled every
   * `intervalMs` into `<topic>/<browse path>`, or one subscription whose items go to the same topics.
   * The browse path (Plant1/Press4/Temperature) names each topic and each read function; a node id is
   * never a topic segment.
   */
  async pick(organizationId: string, id: string, body: PickBody, actor: Actor) {
    const seen = new Set<string>();
    for (const [i, node] of body.nodes.entries()) {
      if (seen.has(node.nodeId)) throw badRequest(`nodes/${i}/nodeId: ${node.nodeId} is picked twice`);
      seen.add(node.nodeId);
    }
    if (body.mode === 'read' && body.intervalMs === undefined)
      throw badRequest('intervalMs is required when mode is read');
    const paths = await this.withSession(organizationId, id, async (session) => {
      const out: string[][] = [];
      for (const node of body.nodes) out.push((await session.browsePath!(node.nodeId)).map(topicSegment));
      return out;
    });
    const topicOf = (path: string[]) => `${body.topic}/${path.join('/')}`;
    const bodies: CreateFunctionBody[] =
      body.mode === 'read'
        ? body.nodes.map((node, i) => ({
            name: paths[i]!.join('/').slice(0, 100),
            type: 'opcua.read',
            config: { nodeId: node.nodeId },
            uns: { topic: topicOf(paths[i]!), intervalMs: body.intervalMs! },
          }))
        : [
            {
              name: (body.name ?? `Subscription of ${body.nodes.length} nodes under ${body.topic}`).slice(
                0,
                100,
              ),
              type: 'opcua.subscribe',
              config: {
                nodeIds: body.nodes.map((n) => n.nodeId),
                ...(body.samplingIntervalMs !== undefined
                  ? { samplingIntervalMs: body.samplingIntervalMs }
                  : {}),
                ...(body.publishingIntervalMs !== undefined
                  ? { publishingIntervalMs: body.publishingIntervalMs }
                  : {}),
              },
              uns: {
                topic: body.topic,
                items: Object.fromEntries(body.nodes.map((node, i) => [node.nodeId, topicOf(paths[i]!)])),
              },
            },
          ];
    return this.deps.functions.createMany(organizationId, id, bodies, actor);
  }
}
