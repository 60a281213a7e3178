import jsonata from 'jsonata';
import { PointerError } from '../../../platform/errors.js';
import { nodeType, outputsOf, parameterErrors } from '../nodes/node-types.js';
import { loopProblems } from './loop-bodies.js';

/** A malformed pipeline body: `path` is the JSON pointer of the member at fault. */
export class PipelineInputError extends PointerError {}

export interface RetrySettings {
  maxTries: number;
  waitMs: number;
  backoff: 'fixed' | 'exponential';
}

export interface NodeSettings {
  timeoutSeconds?: number;
  retry?: RetrySettings;
  onError?: 'stop' | 'continue' | 'errorPort';
}

export interface PipelineNode {
  id: string;
  name: string;
  type: string;
  parameters: Record<string, unknown>;
  settings?: NodeSettings;
  position?: { x: number; y: number };
  notes?: string;
  disabled?: boolean;
}

export interface PipelineEdge {
  id: string;
  source: string;
  sourcePort: string;
  target: string;
}

export interface PipelineSettings {
  concurrency: { mode: 'queue' | 'skip' | 'restart' | 'parallel'; max: number };
  historyDetail: 'minimal' | 'standard' | 'full';
  timeoutSeconds: number;
  priority: 'high' | 'normal' | 'low';
  defaults: NodeSettings;
}

/** A problem that keeps a pipeline from being enabled; `nodeId` is null for the graph as a whole. */
export interface GraphProblem {
  nodeId: string | null;
  path: string;
  message: string;
}

export const DEFAULT_SETTINGS: PipelineSettings = {
  concurrency: { mode: 'queue', max: 1 },
  historyDetail: 'standard',
  timeoutSeconds: 3600,
  priority: 'normal',
  defaults: {},
};

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function allowOnly(value: Record<string, unknown>, path: string, allowed: string[]) {
  const extra = Object.keys(value).find((k) => !allowed.includes(k));
  if (extra !== undefined)
    throw new PipelineInputError(
      `${path}/${extra.slice(0, 60)}`,
      `is not a known member; allowed: ${allowed.join(', ')}`,
    );
}

function integer(value: unknown, path: string, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max)
    throw new PipelineInputError(path, `must be an integer from ${min} to ${max}`);
  return value;
}

function oneOf<T extends string>(value: unknown, path: string, allowed: readonly T[]): T {
  if (typeof value !== 'string' || !allowed.includes(value as T))
    throw new PipelineInputError(path, `must be one of ${allowed.join(', ')}`);
  return value as T;
}

function checkNodeSettings(input: unknown, path: string): NodeSettings {
  if (!isObject(input)) throw new PipelineInputError(path, 'must be an object');
  allowOnly(input, path, ['timeoutSeconds', 'retry', 'onError']);
  const settings: NodeSettings = {};
  if (input.timeoutSeconds !== undefined)
    settings.timeoutSeconds = integer(input.timeoutSeconds, `${path}/timeoutSeconds`, 1, 600);
  if (input.retry !== undefined) {
    const r = input.retry;
    if (!isObject(r)) throw new PipelineInputError(`${path}/retry`, 'must be an object');
    allowOnly(r, `${path}/retry`, ['maxTries', 'waitMs', 'backoff']);
    settings.retry = {
      maxTries: integer(r.maxTries ?? 1, `${path}/retry/maxTries`, 1, 10),
      waitMs: integer(r.waitMs ?? 0, `${path}/retry/waitMs`, 0, 300_000),
      backoff: oneOf(r.backoff ?? 'fixed', `${path}/retry/backoff`, ['fixed', 'exponential'] as const),
    };
  }
  if (input.onError !== undefined)
    settings.onError = oneOf(input.onError, `${path}/onError`, ['stop', 'continue', 'errorPort'] as const);
  return settings;
}

export function checkSettings(input: unknown): PipelineSettings {
  if (input === undefined) return structuredClone(DEFAULT_SETTINGS);
  if (!isObject(input)) throw new PipelineInputError('/settings', 'must be an object');
  allowOnly(input, '/settings', ['concurrency', 'historyDetail', 'timeoutSeconds', 'priority', 'defaults']);
  let concurrency = DEFAULT_SETTINGS.concurrency;
  if (input.concurrency !== undefined) {
    const c = input.concurrency;
    if (!isObject(c)) throw new PipelineInputError('/settings/concurrency', 'must be an object');
    allowOnly(c, '/settings/concurrency', ['mode', 'max']);
    concurrency = {
      mode: oneOf(c.mode ?? 'queue', '/settings/concurrency/mode', [
        'queue',
        'skip',
        'restart',
        'parallel',
      ] as const),
      max: integer(c.max ?? 1, '/settings/concurrency/max', 1, 1000),
    };
  }
  return {
    concurrency,
    historyDetail: oneOf(input.historyDetail ?? 'standard', '/settings/historyDetail', [
      'minimal',
      'standard',
      'full',
    ] as const),
    timeoutSeconds: integer(input.timeoutSeconds ?? 3600, '/settings/timeoutSeconds', 1, 86_400),
    priority: oneOf(input.priority ?? 'normal', '/settings/priority', ['high', 'normal', 'low'] as const),
    defaults: input.defaults === undefined ? {} : checkNodeSettings(input.defaults, '/settings/defaults'),
  };
}

const NODE_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** Checks the shape of each node (not the graph: an invalid graph can be saved). */
export function checkNodes(input: unknown): PipelineNode[] {
  if (input === undefined) return [];
  if (!Array.isArray(input) || input.length > 500)
    throw new PipelineInputError('/nodes', 'must be an array of at most 500 nodes');
  return input.map((n, i) => {
    const path = `/nodes/${i}`;
    if (!isObject(n)) throw new PipelineInputError(path, 'must be an object');
    allowOnly(n, path, ['id', 'name', 'type', 'parameters', 'settings', 'position', 'notes', 'disabled']);
    if (typeof n.id !== 'string' || !NODE_ID.test(n.id))
      throw new PipelineInputError(`${path}/id`, 'must be 1 to 64 characters of A-Z, a-z, 0-9, _ and -');
    if (typeof n.name !== 'string' || n.name.length < 1 || [...n.name].length > 100)
      throw new PipelineInputError(`${path}/name`, 'must be a string of 1 to 100 characters');
    if (typeof n.type !== 'string' || n.type.length < 1 || n.type.length > 100)
      throw new PipelineInputError(`${path}/type`, 'must be a node type name (see GET /api/v1/engine/nodes)');
    const parameters = n.parameters ?? {};
    if (!isObject(parameters)) throw new PipelineInputError(`${path}/parameters`, 'must be an object');
    const node: PipelineNode = { id: n.id, name: n.name, type: n.type, parameters };
    if (n.settings !== undefined) node.settings = checkNodeSettings(n.settings, `${path}/settings`);
    if (n.position !== undefined) {
      const p = n.position;
      if (
        !isObject(p) ||
        typeof p.x !== 'number' ||
        typeof p.y !== 'number' ||
        !Number.isFinite(p.x) ||
        !Number.isFinite(p.y)
      )
        throw new PipelineInputError(`${path}/position`, 'must be { x: number, y: number }');
      node.position = { x: p.x, y: p.y };
    }
    if (n.notes !== undefined) {
      if (typeof n.notes !== 'string' || n.notes.length > 2000)
        throw new PipelineInputError(`${path}/notes`, 'must be a string of at most 2000 characters');
      node.notes = n.notes;
    }
    if (n.disabled !== undefined) {
      if (typeof n.disabled !== 'boolean')
        throw new PipelineInputError(`${path}/disabled`, 'must be a boolean');
      node.disabled = n.disabled;
    }
    return node;
  });
}

export function checkEdges(input: unknown): PipelineEdge[] {
  if (input === undefined) return [];
  if (!Array.isArray(input) || input.length > 2000)
    throw new PipelineInputError('/edges', 'must be an array of at most 2000 edges');
  return input.map((e, i) => {
    const path = `/edges/${i}`;
    if (!isObject(e)) throw new PipelineInputError(path, 'must be an object');
    allowOnly(e, path, ['id', 'source', 'sourcePort', 'target', 'targetPort']);
    for (const key of ['source', 'target'] as const)
      if (typeof e[key] !== 'string' || !NODE_ID.test(e[key] as string))
        throw new PipelineInputError(`${path}/${key}`, 'must be a node id');
    if (e.sourcePort !== undefined && (typeof e.sourcePort !== 'string' || e.sourcePort.length > 64))
      throw new PipelineInputError(`${path}/sourcePort`, 'must be a port name');
    if (e.id !== undefined && (typeof e.id !== 'string' || !NODE_ID.test(e.id)))
      throw new PipelineInputError(`${path}/id`, 'must be 1 to 64 characters of A-Z, a-z, 0-9, _ and -');
    const sourcePort = (e.sourcePort as string | undefined) ?? 'out';
    return {
      id: (e.id as string | undefined) ?? `${e.source}-${sourcePort}-${e.target}`,
      source: e.source as string,
      sourcePort,
      target: e.target as string,
    };
  });
}

/**
 * Every problem that keeps the graph from running: duplicate ids and names, unknown types, parameters
 * against each type's JSON Schema, expressions that do not compile, edges to unknown nodes or ports,
 * cycles, and a graph without a trigger. All of them, each with its node.
 */
export function graphProblems(nodes: PipelineNode[], edges: PipelineEdge[]): GraphProblem[] {
  const problems: GraphProblem[] = [];
  const byId = new Map<string, PipelineNode>();
  const names = new Set<string>();
  nodes.forEach((node, i) => {
    if (byId.has(node.id))
      problems.push({
        nodeId: node.id,
        path: `/nodes/${i}/id`,
        message: `repeats the node id ${JSON.stringify(node.id)}`,
      });
    byId.set(node.id, node);
    if (names.has(node.name))
      problems.push({
        nodeId: node.id,
        path: `/nodes/${i}/name`,
        message: `repeats the node name ${JSON.stringify(node.name)}`,
      });
    names.add(node.name);
    const type = nodeType(node.type);
    if (!type) {
      problems.push({
        nodeId: node.id,
        path: `/nodes/${i}/type`,
        message: `is not a known node type: ${JSON.stringify(node.type)}`,
      });
      return;
    }
    for (const e of parameterErrors(type, node.parameters))
      problems.push({ nodeId: node.id, path: `/nodes/${i}/parameters${e.path}`, message: e.message });
    for (const name of type.expressionParameters) {
      const source = node.parameters[name];
      if (typeof source !== 'string') continue;
      try {
        jsonata(source);
      } catch (error) {
        problems.push({
          nodeId: node.id,
          path: `/nodes/${i}/parameters/${name}`,
          message: `does not compile: ${(error as Error).message}`,
        });
      }
    }
  });
  if (!nodes.some((n) => nodeType(n.type)?.category === 'trigger'))
    problems.push({ nodeId: null, path: '/nodes', message: 'has no trigger node' });
  edges.forEach((edge, i) => {
    const source = byId.get(edge.source);
    const target = byId.get(edge.target);
    if (!source)
      problems.push({
        nodeId: edge.source,
        path: `/edges/${i}/source`,
        message: `names no node of this pipeline`,
      });
    if (!target)
      problems.push({
        nodeId: edge.target,
        path: `/edges/${i}/target`,
        message: `names no node of this pipeline`,
      });
    const sourceType = source && nodeType(source.type);
    const sourcePorts = sourceType && outputsOf(sourceType, source.parameters);
    if (sourcePorts && edge.sourcePort !== 'error' && !sourcePorts.includes(edge.sourcePort))
      problems.push({
        nodeId: edge.source,
        path: `/edges/${i}/sourcePort`,
        message: `${source!.type} has no output port ${JSON.stringify(edge.sourcePort)} (ports: ${[...sourcePorts, 'error'].join(', ')})`,
      });
    const targetType = target && nodeType(target.type);
    if (targetType && targetType.inputs.length === 0)
      problems.push({
        nodeId: edge.target,
        path: `/edges/${i}/target`,
        message: `${target.type} takes no input`,
      });
  });
  const cycle = cycleMembers(nodes, edges);
  for (const nodeId of cycle) problems.push({ nodeId, path: '/edges', message: 'is part of a cycle' });
  if (cycle.length === 0) problems.push(...loopProblems(nodes, edges));
  return problems;
}

/** The nodes on a cycle (Kahn's algorithm: what is never freed). */
function cycleMembers(nodes: PipelineNode[], edges: PipelineEdge[]): string[] {
  const ids = new Set(nodes.map((n) => n.id));
  const indegree = new Map([...ids].map((id) => [id, 0]));
  const valid = edges.filter((e) => ids.has(e.source) && ids.has(e.target));
  for (const e of valid) indegree.set(e.target, indegree.get(e.target)! + 1);
  const ready = [...ids].filter((id) => indegree.get(id) === 0);
  while (ready.length > 0) {
    const id = ready.pop()!;
    for (const e of valid)
      if (e.source === id) {
        indegree.set(e.target, indegree.get(e.target)! - 1);
        if (indegree.get(e.target) === 0) ready.push(e.target);
      }
    indegree.delete(id);
  }
  return [...indegree.keys()];
}
