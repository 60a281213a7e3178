import { randomUUID } from 'node:crypto';
import type { Actor } from '../../../platform/actor.js';
import { badRequest, conflict, notFound, withDetails } from '../../../platform/errors.js';
import { renameInJavaScript, renameInJsonata, renameInTemplates } from '../nodes/node-references.js';
import { nodeType } from '../nodes/node-types.js';
import {
  checkEdges,
  checkNodes,
  type PipelineEdge,
  PipelineInputError,
  type PipelineNode,
} from './pipeline-definition.js';
import type { PipelineRow } from './pipelines.repository.js';
import type { PipelinesService } from './pipelines.service.js';

const NODE_MEMBERS = ['id', 'name', 'type', 'parameters', 'settings', 'position', 'notes', 'disabled'];
const PATCH_MEMBERS = ['type', 'parameters', 'settings', 'position', 'notes', 'disabled'];

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

const fault = (path: string, message: string) => withDetails(badRequest(`${path}: ${message}`), { path });

/** Checks one node through the pipeline rules, naming members below `path` (not `/nodes/0`). */
function checkNode(input: unknown, path: string): PipelineNode {
  try {
    return checkNodes([input])[0]!;
  } catch (error) {
    if (!(error instanceof PipelineInputError)) throw error;
    const at = error.path.replace(/^\/nodes\/0/, path);
    throw fault(at, error.message.slice(error.path.length + 2));
  }
}

function checkVersion(version: unknown): number {
  if (typeof version !== 'number' || !Number.isInteger(version))
    throw fault('/version', 'is required: the version this change is based on');
  return version;
}

/** A node's name rules beyond the node shape: unique, and writable in a JSONata backtick name. */
function checkNewName(pipeline: PipelineRow, name: unknown, exceptId: string | null): string {
  if (typeof name !== 'string' || name.length < 1 || [...name].length > 100)
    throw fault('/name', 'is required: a string of 1 to 100 characters');
  if (name.trim() !== name || name.includes('`') || [...name].some((c) => c.codePointAt(0)! < 0x20))
    throw fault('/name', 'must not start or end with white space, nor hold a backtick or control character');
  if (pipeline.nodes.some((n) => n.name === name && n.id !== exceptId))
    throw conflict(`a node named ${JSON.stringify(name)} exists in this pipeline`);
  return name;
}

/** Where the rename rewrote a reference: node id and the JSON pointer below it. */
export interface Rewrite {
  nodeId: string;
  path: string;
}

/**
 * The references to node `from` in `node`'s parameters renamed to `to`: its JSONata parameters, its
 * JavaScript parameters and every `{{ expr }}` string. Code that does not parse is listed in `skipped`.
 */
export function renameReferences(node: PipelineNode, from: string, to: string) {
  const type = nodeType(node.type);
  const rewrites: string[] = [];
  const skipped: string[] = [];
  const parameters: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node.parameters)) {
    let next = value;
    if (typeof value === 'string' && type?.expressionParameters.includes(key))
      next = renameInJsonata(value, from, to);
    else if (typeof value === 'string' && (type?.codeParameters ?? []).includes(key)) {
      const result = renameInJavaScript(value, from, to);
      if (!result.parsed) skipped.push(`/parameters/${key}`);
      next = result.code;
    } else next = renameInTemplates(value, from, to);
    if (JSON.stringify(next) !== JSON.stringify(value)) rewrites.push(`/parameters/${key}`);
    parameters[key] = next;
  }
  return { node: { ...node, parameters }, rewrites, skipped };
}

/**
 * Node operations on a stored pipeline (`/engine/pipelines/{id}/nodes`): each checks the `version` the
 * caller edited and writes one new pipeline version through PipelinesService.update (409 when stale).
 */
export class PipelineNodesService {
  constructor(private readonly pipelines: PipelinesService) {}

  /** The pipeline at `version` (409 naming the current version otherwise). */
  private async at(organizationId: string, id: string, version: unknown): Promise<PipelineRow> {
    const basedOn = checkVersion(version);
    const pipeline = await this.pipelines.get(organizationId, id);
    if (pipeline.version !== basedOn)
      throw withDetails(
        conflict(
          `the pipeline is at version ${pipeline.version}, not ${basedOn}; reload it and apply your change again`,
        ),
        { currentVersion: pipeline.version },
      );
    return pipeline;
  }

  private save(
    organizationId: string,
    pipeline: PipelineRow,
    nodes: PipelineNode[],
    edges: PipelineEdge[],
    actor: Actor,
  ) {
    const {
      id,
      version,
      organizationId: _o,
      createdAt,
      createdBy,
      updatedAt,
      updatedBy,
      ...content
    } = pipeline;
    return this.pipelines.update(organizationId, id, { ...content, nodes, edges, version }, actor);
  }

  private node(pipeline: PipelineRow, nodeId: string): PipelineNode {
    const node = pipeline.nodes.find((n) => n.id === nodeId);
    if (!node) throw notFound('node');
    return node;
  }

  /** Adds a node (id generated when absent; name from the type's title when absent) with optional edges. */
  async add(organizationId: string, id: string, body: Record<string, unknown>, actor: Actor) {
    const pipeline = await this.at(organizationId, id, body.version);
    if (!isObject(body.node)) throw fault('/node', 'is required: the node to add');
    const input = { ...body.node };
    const extra = Object.keys(input).find((k) => !NODE_MEMBERS.includes(k));
    if (extra !== undefined)
      throw fault(
        `/node/${extra.slice(0, 60)}`,
        `is not a known member; allowed: ${NODE_MEMBERS.join(', ')}`,
      );
    const type = typeof input.type === 'string' ? nodeType(input.type) : undefined;
    if (!type) throw fault('/node/type', 'must be a node type of GET /api/v1/engine/nodes');
    input.id ??= randomUUID().slice(0, 8);
    if (input.name === undefined) {
      let name = type.title;
      for (let n = 2; pipeline.nodes.some((node) => node.name === name); n++) name = `${type.title} ${n}`;
      input.name = name;
    }
    const node = checkNode(input, '/node');
    if (pipeline.nodes.some((n) => n.id === node.id))
      throw conflict(`a node with id ${JSON.stringify(node.id)} exists in this pipeline`);
    checkNewName(pipeline, node.name, null);
    let edges: PipelineEdge[] = [];
    try {
      edges = checkEdges(body.edges);
    } catch (error) {
      if (error instanceof PipelineInputError)
        throw fault(error.path, error.message.slice(error.path.length + 2));
      throw error;
    }
    const ids = new Set([...pipeline.nodes.map((n) => n.id), node.id]);
    edges.forEach((edge, i) => {
      for (const end of ['source', 'target'] as const)
        if (!ids.has(edge[end])) throw fault(`/edges/${i}/${end}`, 'names no node of this pipeline');
      if (edge.source !== node.id && edge.target !== node.id)
        throw fault(`/edges/${i}`, 'must connect the added node');
      if (edges.slice(0, i).some((e) => e.id === edge.id))
        throw fault(`/edges/${i}`, `repeats the edge ${JSON.stringify(edge.id)}`);
    });
    return this.save(
      organizationId,
      pipeline,
      [...pipeline.nodes, node],
      [...pipeline.edges, ...edges],
      actor,
    );
  }

  /** Replaces the given members of a node (not its id; its name through rename). */
  async update(
    organizationId: string,
    id: string,
    nodeId: string,
    body: Record<string, unknown>,
    actor: Actor,
  ) {
    const pipeline = await this.at(organizationId, id, body.version);
    const current = this.node(pipeline, nodeId);
    for (const key of Object.keys(body)) {
      if (key === 'version') continue;
      if (key === 'name')
        throw fault('/name', 'is changed by POST …/nodes/{nodeId}/rename, which rewrites references');
      if (!PATCH_MEMBERS.includes(key))
        throw fault(
          `/${key.slice(0, 60)}`,
          `is not a known member; allowed: version, ${PATCH_MEMBERS.join(', ')}`,
        );
    }
    const merged: Record<string, unknown> = { ...current };
    for (const key of PATCH_MEMBERS)
      if (key in body) {
        if (body[key] === null) delete merged[key];
        else merged[key] = body[key];
      }
    const node = checkNode(merged, '');
    if (!nodeType(node.type)) throw fault('/type', 'must be a node type of GET /api/v1/engine/nodes');
    return this.save(
      organizationId,
      pipeline,
      pipeline.nodes.map((n) => (n.id === nodeId ? node : n)),
      pipeline.edges,
      actor,
    );
  }

  /** Removes a node with every edge to or from it. */
  async remove(organizationId: string, id: string, nodeId: string, version: unknown, actor: Actor) {
    const pipeline = await this.at(organizationId, id, version);
    this.node(pipeline, nodeId);
    return this.save(
      organizationId,
      pipeline,
      pipeline.nodes.filter((n) => n.id !== nodeId),
      pipeline.edges.filter((e) => e.source !== nodeId && e.target !== nodeId),
      actor,
    );
  }

  /** Renames a node and rewrites the references to its old name in every other node, in one version. */
  async rename(
    organizationId: string,
    id: string,
    nodeId: string,
    body: Record<string, unknown>,
    actor: Actor,
  ) {
    const pipeline = await this.at(organizationId, id, body.version);
    const current = this.node(pipeline, nodeId);
    const name = checkNewName(pipeline, body.name, nodeId);
    const rewritten: Rewrite[] = [];
    const skipped: Rewrite[] = [];
    const nodes = pipeline.nodes.map((n) => {
      const result = renameReferences(n.id === nodeId ? { ...n, name } : n, current.name, name);
      rewritten.push(...result.rewrites.map((path) => ({ nodeId: n.id, path })));
      skipped.push(...result.skipped.map((path) => ({ nodeId: n.id, path })));
      return result.node;
    });
    const saved = await this.save(organizationId, pipeline, nodes, pipeline.edges, actor);
    return { pipeline: saved, rewritten, skipped };
  }
}
