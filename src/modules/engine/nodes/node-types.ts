import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { Cron } from 'croner';
import { safeRegExpEngine } from '../../../platform/safe-regexp.js';
import type { ExecutionTrigger } from '../executions/execution-rows.js';
import type { Sandbox } from '../sandbox/sandbox.js';
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

const expression = (description: string) => ({
  type: 'string',
  minLength: 1,
  maxLength: 20_000,
  description,
});

/** A string holding exactly `{{ expr }}` is evaluated as JSONata; other values are kept as they are. */
const TEMPLATE = /^\{\{([\s\S]*)\}\}$/;

export async function resolveTemplates(value: unknown, c: NodeContext): Promise<unknown> {
  if (typeof value === 'string') {
    const match = TEMPLATE.exec(value.trim());
    if (!match) return value;
    return (await c.sandbox.jsonata(match[1]!, c.input, bindingsOf(c), { timeoutMs: c.timeoutMs })).value;
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
  {
    type: 'trigger.manual',
    typeVersion: 1,
    category: 'trigger',
    title: 'Manual trigger',
    description:
      'Starts the pipeline from `POST /engine/pipelines/{id}/execute`; its output is the request input.',
    parameters: { type: 'object', properties: {}, additionalProperties: false },
    inputs: [],
    outputs: ['out'],
    sideEffect: 'none',
    testable: true,
    expressionParameters: [],
    run: async (c) => ({ output: c.input ?? null, port: 'out' }),
  },
  {
    type: 'trigger.schedule',
    typeVersion: 1,
    category: 'trigger',
    title: 'Schedule',
    description:
      'Starts the pipeline at each fire time of a cron pattern (5 fields, or 6 with seconds first) in a time zone, ' +
      'once per fire time across replicas, while the pipeline is enabled. Its output is `{ firedAt }`.',
    parameters: {
      type: 'object',
      properties: {
        cron: {
          type: 'string',
          minLength: 9,
          maxLength: 200,
          description: 'e.g. `*/5 * * * * *` (every 5 s).',
        },
        timezone: { type: 'string', minLength: 1, maxLength: 64, description: 'IANA name; default UTC.' },
      },
      required: ['cron'],
      additionalProperties: false,
    },
    inputs: [],
    outputs: ['out'],
    sideEffect: 'none',
    testable: true,
    expressionParameters: [],
    check: (parameters) => {
      const timezone = (parameters.timezone as string | undefined) ?? 'UTC';
      try {
        new Intl.DateTimeFormat('en', { timeZone: timezone });
      } catch {
        return [{ path: '/timezone', message: `is not a known IANA time zone: ${JSON.stringify(timezone)}` }];
      }
      try {
        const cron = new Cron(String(parameters.cron), { timezone, paused: true });
        cron.nextRun();
        cron.stop();
        return [];
      } catch (error) {
        return [{ path: '/cron', message: `is not valid: ${(error as Error).message}` }];
      }
    },
    run: async (c) => ({ output: c.input ?? null, port: 'out' }),
  },
  {
    type: 'flow.condition',
    typeVersion: 1,
    category: 'flow',
    title: 'Condition',
    description: 'Evaluates a JSONata expression against the input; passes the input on `true` or `false`.',
    parameters: {
      type: 'object',
      properties: { expression: expression('JSONata; `$` is the input, `$trigger` and `$node` are bound.') },
      required: ['expression'],
      additionalProperties: false,
    },
    inputs: ['in'],
    outputs: ['true', 'false'],
    sideEffect: 'none',
    testable: true,
    expressionParameters: ['expression'],
    run: async (c) => {
      const { value } = await c.sandbox.jsonata(String(c.parameters.expression), c.input, bindingsOf(c), {
        timeoutMs: c.timeoutMs,
      });
      return { output: c.input ?? null, port: value ? 'true' : 'false' };
    },
  },
  {
    type: 'flow.stop-error',
    typeVersion: 1,
    category: 'flow',
    title: 'Stop with error',
    description:
      'Ends the node with the given error message (and the execution, unless on-error says otherwise).',
    parameters: {
      type: 'object',
      properties: { message: { type: 'string', minLength: 1, maxLength: 1000 } },
      required: ['message'],
      additionalProperties: false,
    },
    inputs: ['in'],
    outputs: [],
    sideEffect: 'none',
    testable: true,
    expressionParameters: [],
    run: async (c) => {
      throw new NodeError('stopped', String(c.parameters.message));
    },
  },
  {
    type: 'transform.set',
    typeVersion: 1,
    category: 'transform',
    title: 'Set fields',
    description:
      'Sets members on the input (`merge`) or builds a new object (`replace`). A string value `{{ expr }}` is a JSONata expression.',
    parameters: {
      type: 'object',
      properties: {
        fields: { type: 'object', maxProperties: 200 },
        mode: { enum: ['merge', 'replace'], default: 'merge' },
      },
      required: ['fields'],
      additionalProperties: false,
    },
    inputs: ['in'],
    outputs: ['out'],
    sideEffect: 'none',
    testable: true,
    expressionParameters: [],
    run: async (c) => {
      const fields = (await resolveTemplates(c.parameters.fields, c)) as Record<string, unknown>;
      const base =
        c.parameters.mode !== 'replace' && c.input && typeof c.input === 'object' && !Array.isArray(c.input)
          ? (c.input as Record<string, unknown>)
          : {};
      return { output: { ...base, ...fields }, port: 'out' };
    },
  },
  {
    type: 'transform.jsonata',
    typeVersion: 1,
    category: 'transform',
    title: 'JSONata expression',
    description:
      'Its output is the expression evaluated against the input (`$`), with `$trigger` and `$node` bound.',
    parameters: {
      type: 'object',
      properties: { expression: expression('JSONata.') },
      required: ['expression'],
      additionalProperties: false,
    },
    inputs: ['in'],
    outputs: ['out'],
    sideEffect: 'none',
    testable: true,
    expressionParameters: ['expression'],
    run: async (c) => {
      const { value } = await c.sandbox.jsonata(String(c.parameters.expression), c.input, bindingsOf(c), {
        timeoutMs: c.timeoutMs,
      });
      return { output: value ?? null, port: 'out' };
    },
  },
  {
    type: 'code.javascript',
    typeVersion: 1,
    category: 'code',
    title: 'JavaScript code',
    description:
      'A function body run in QuickJS (no process, require, file system or network) with `$input`, `$trigger`, `$node` and `$attempt`; its return value (JSON) is the output. `console.log` lines are kept.',
    parameters: {
      type: 'object',
      properties: { code: { type: 'string', minLength: 1, maxLength: 100_000 } },
      required: ['code'],
      additionalProperties: false,
    },
    inputs: ['in'],
    outputs: ['out'],
    sideEffect: 'none',
    testable: true,
    expressionParameters: [],
    codeParameters: ['code'],
    run: async (c) => {
      const { value, logs } = await c.sandbox.javascript(String(c.parameters.code), c.input, bindingsOf(c), {
        timeoutMs: c.timeoutMs,
      });
      return { output: value ?? null, port: 'out', logs };
    },
  },
  {
    type: 'uns.publish',
    typeVersion: 1,
    category: 'uns',
    title: 'UNS publish',
    description:
      'Publishes a value to a UNS topic of the organization (default: the input). `topic` and `value` may be `{{ expr }}`.',
    parameters: {
      type: 'object',
      properties: {
        topic: { type: 'string', minLength: 1, maxLength: 1024 },
        value: { description: 'Default: the input.' },
        quality: { type: 'integer', minimum: 0, maximum: 2 },
      },
      required: ['topic'],
      additionalProperties: false,
    },
    inputs: ['in'],
    outputs: ['out'],
    sideEffect: 'external',
    testable: true,
    expressionParameters: [],
    run: async (c) => {
      const topic = await resolveTemplates(c.parameters.topic, c);
      if (typeof topic !== 'string') throw new NodeError('bad_parameter', 'topic: must evaluate to a string');
      const value = 'value' in c.parameters ? await resolveTemplates(c.parameters.value, c) : c.input;
      await c.publish(topic, value, c.parameters.quality as number | undefined);
      return { output: { topic, value }, port: 'out' };
    },
  },
  ...FLOW_NODE_TYPES,
  ...DATA_NODE_TYPES,
  ...TRIGGER_NODE_TYPES,
];

const ajv = new Ajv2020({ allErrors: true, strict: false, code: { regExp: safeRegExpEngine } });
const validators = new Map<string, ValidateFunction>();

export const nodeType = (type: string): NodeType | undefined => NODE_TYPES.find((t) => t.type === type);

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
  return (validate.errors ?? []).map((e) => ({
    path:
      e.instancePath +
      (e.keyword === 'additionalProperties' ? `/${String(e.params.additionalProperty)}` : '') +
      (e.keyword === 'required' ? `/${String(e.params.missingProperty)}` : ''),
    message: e.keyword === 'additionalProperties' ? 'is not a known parameter' : (e.message ?? 'is invalid'),
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
});
