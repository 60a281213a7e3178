import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { safeRegExpEngine } from '../../../platform/safe-regexp.js';
import { ajvMessage, foldConstantChoices } from '../../../platform/validation.js';
import type { ExecutionTrigger } from '../queue/execution-rows.js';
import type { EvaluationOptions, Sandbox } from '../sandbox/sandbox.js';
import { CORE_NODE_TYPES } from './core-nodes.js';
import { DATA_NODE_TYPES } from './data-nodes.js';
import { FLOW_NODE_TYPES } from './flow-nodes.js';
import type { NodeServices } from './node-services.js';
import { TRIGGER_NODE_TYPES } from './trigger-nodes.js';

/** What running a node can touch outside the execution. */
export type SideEffect = 'none' | 'reads-device' | 'writes-device' | 'external';

/** Everything a node's code sees while it runs. */
export interface NodeContext {
  organizationId: string;
  parameters: Record<string, unknown>;
  /** The output of the upstream node that activated this one (for a trigger: the execution input). */
  input: unknown;
  /** The execution's trigger payload. */
  trigger: unknown;
  /** Outputs of the nodes that ran before, by node name. */
  nodes: Record<string, { data: unknown }>;
  sandbox: Sandbox;
  /** Per-evaluation time limit (the node's timeout). */
  timeoutMs: number;
  /** Which try this is (1 for the first; retries count up). */
  attempt: number;
  /** Publishes one value to the UNS of the organization; resolves once committed. */
  publish(topic: string, value: unknown, quality?: number): Promise<void>;
  /** For a node that joins inputs (`join`): every input that arrived, in arrival order. */
  inputs?: { source: string; port: string; data: unknown }[];
  /** The engine's clock (default Date.now). */
  now?: () => number;
  /** Where the node runs in an execution (absent when a node is tested on its own). */
  run?: NodeRunInfo;
  /** Storage and the other modules, for data and integration nodes (absent where none are offered). */
  services?: NodeServices;
  /**
   * Marks the node run, durably, as writing to a device before a write its type does not declare
   * (a connection call whose function writes): recovery after a crash never runs it again.
   */
  beforeDeviceWrite?(): Promise<void>;
}

/** The execution, pipeline and node a node runs in. */
export interface NodeRunInfo {
  executionId: string;
  pipelineId: string;
  nodeId: string;
  /** The enclosing for-each iterations (`2.0`), null outside loops. */
  iterationKey?: string | null;
  trigger: ExecutionTrigger;
}

export interface NodeResult {
  output: unknown;
  /** The output port the result leaves by. */
  port: string;
  /** Every port it leaves by, when more than one (a switch matching several rules); default `[port]`. */
  ports?: string[];
  /** A for-each: the nodes on its `item` port run once per element; `done` then carries their results. */
  iterate?: unknown[];
  /** A wait: the engine continues after this time (ms since the epoch), parking a long wait in the database. */
  waitUntil?: number;
  logs?: string[];
}

/** A failure a node reports on purpose (stop with error) or from a refused parameter. */
export class NodeError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'NodeError';
  }
}

export interface NodeType {
  type: string;
  typeVersion: number;
  category: 'trigger' | 'flow' | 'transform' | 'code' | 'uns' | 'integration' | 'model';
  title: string;
  description: string;
  /** JSON Schema (draft 2020-12) of `parameters`. */
  parameters: Record<string, unknown>;
  inputs: string[];
  outputs: string[];
  sideEffect: SideEffect;
  /** Whether `POST /engine/nodes/test` may run it (a device write needs confirmWrites). */
  testable: boolean;
  /** JSONata expressions among the parameters (compiled on validation). */
  expressionParameters: string[];
  /** JavaScript function bodies among the parameters (their `$node` references follow a rename). */
  codeParameters?: string[];
  /** Output ports that follow from the parameters (a switch's rules); default `outputs`. */
  outputsFor?(parameters: Record<string, unknown>): string[];
  /** How the catalogue describes parameter-made ports: one `port` (with `{index}`) per item of `parameter`. */
  dynamicOutputs?: { parameter: string; port: string };
  /** A node joining its inputs: `all` runs once every connected input arrived, `first` on the first. */
  join?(parameters: Record<string, unknown>): 'all' | 'first';
  /** Checks beyond the JSON Schema (run after it passed); pointers below `parameters`. */
  check?(parameters: Record<string, unknown>): { path: string; message: string }[];
  /**
   * The side effect of a node with these parameters, where they decide it (a connection call: its
   * function's direction); without it, `sideEffect`. See sideEffectOfNode.
   */
  sideEffectOf?(
    parameters: Record<string, unknown>,
    context: { organizationId: string; services?: NodeServices | undefined },
  ): Promise<SideEffect>;
  run(context: NodeContext): Promise<NodeResult>;
}

export const bindingsOf = (c: NodeContext) => ({
  input: c.input,
  trigger: c.trigger,
  node: c.nodes,
  attempt: c.attempt,
});

/** What a node's evaluations tell the sandbox: whose turn they wait for, and the node's time limit. */
export const evaluationOf = (c: NodeContext): EvaluationOptions => ({
  organizationId: c.organizationId,
  timeoutMs: c.timeoutMs,
});

/** A JSONata expression of a node, evaluated in the sandbox against its input with its bindings. */
export const evaluateJsonata = (c: NodeContext, expression: string) =>
  c.sandbox.jsonata(expression, c.input, bindingsOf(c), evaluationOf(c));

/** A string holding exactly `{{ expr }}` is evaluated as JSONata; other values are kept as they are. */
const TEMPLATE = /^\{\{([\s\S]*)\}\}$/;

export async function resolveTemplates(value: unknown, c: NodeContext): Promise<unknown> {
  if (typeof value === 'string') {
    const match = TEMPLATE.exec(value.trim());
    if (!match) return value;
    return (await evaluateJsonata(c, match[1]!)).value;
  }
  if (Array.isArray(value)) return Promise.all(value.map((v) => resolveTemplates(v, c)));
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = await resolveTemplates(v, c);
    return out;
  }
  return value;
}

/** The node type catalogue. Later node types (schedule, webhook, switch, for-each, connection calls...) add entries here. */
export const NODE_TYPES: NodeType[] = [
  ...CORE_NODE_TYPES,
  ...FLOW_NODE_TYPES,
  ...DATA_NODE_TYPES,
  ...TRIGGER_NODE_TYPES,
];

const ajv = new Ajv2020({ allErrors: true, strict: false, code: { regExp: safeRegExpEngine } });
const validators = new Map<string, ValidateFunction>();

/** NODE_TYPES by name, as of when it had `indexed` entries (tests add types of their own). */
let byType = new Map<string, NodeType>();
let indexed = 0;

/** The node type named `type` (the engine asks several times for each node it runs: a map, not a search). */
export function nodeType(type: string): NodeType | undefined {
  if (indexed !== NODE_TYPES.length) {
    byType = new Map();
    for (const t of NODE_TYPES) if (!byType.has(t.type)) byType.set(t.type, t);
    indexed = NODE_TYPES.length;
  }
  return byType.get(type);
}

/** What a node really touches: its type's side effect, or what its parameters make it (e.g. a write). */
export const sideEffectOfNode = (
  type: NodeType,
  parameters: Record<string, unknown>,
  context: { organizationId: string; services?: NodeServices | undefined },
): Promise<SideEffect> =>
  type.sideEffectOf ? type.sideEffectOf(parameters, context) : Promise.resolve(type.sideEffect);

/** The output ports of a node (besides `error`): its type's, or those its parameters make. */
export const outputsOf = (type: NodeType, parameters: Record<string, unknown>): string[] =>
  type.outputsFor?.(parameters) ?? type.outputs;

/** The parameter errors of a node of `type`, each with the JSON pointer below `parameters`. */
export function parameterErrors(type: NodeType, parameters: unknown): { path: string; message: string }[] {
  let validate = validators.get(type.type);
  if (!validate) {
    validate = ajv.compile(type.parameters);
    validators.set(type.type, validate);
  }
  if (validate(parameters)) return type.check?.(parameters as Record<string, unknown>) ?? [];
  return foldConstantChoices(validate.errors ?? []).map((e) => ({
    path:
      e.instancePath +
      (e.keyword === 'additionalProperties' ? `/${String(e.params.additionalProperty)}` : '') +
      (e.keyword === 'required' ? `/${String(e.params.missingProperty)}` : ''),
    message: e.keyword === 'additionalProperties' ? 'is not a known parameter' : ajvMessage(e),
  }));
}

/** The catalogue entry as the API shows it. */
export const toNodeTypeView = (t: NodeType) => ({
  type: t.type,
  typeVersion: t.typeVersion,
  category: t.category,
  title: t.title,
  description: t.description,
  parameters: t.parameters,
  inputs: t.inputs,
  outputs: [...t.outputs, 'error'],
  ...(t.dynamicOutputs ? { dynamicOutputs: t.dynamicOutputs } : {}),
  sideEffect: t.sideEffect,
  testable: t.testable,
  expressionParameters: t.expressionParameters,
  codeParameters: t.codeParameters ?? [],
});
