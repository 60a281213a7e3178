import { badRequest, withDetails } from '../../../platform/errors.js';
import {
  checkNodes,
  graphProblems,
  PipelineInputError,
  type PipelineNode,
} from '../pipelines/pipeline-definition.js';
import { DEFAULT_LIMITS, type Sandbox, SandboxError } from '../sandbox/sandbox.js';
import { SEQUENCE_LIMIT, STRING_LIMIT, WORKER_HEAP_MB } from '../sandbox/sandbox-limits.js';
import type { NodeServices } from './node-services.js';
import { MemoryNodeState } from './node-state.repository.js';
import { type NodeContext, NodeError, nodeType, sideEffectOfNode } from './node-types.js';

/**
 * The longest a tested node may run, whatever its `timeoutSeconds` (up to 600 in a pipeline): a test is
 * interactive, and its evaluations share the sandbox threads with every organization's pipelines.
 */
export const NODE_TEST_TIMEOUT_SECONDS = 10;

const { maxResultBytes, memoryBytes, maxDepth } = DEFAULT_LIMITS;
const count = (n: number) => n.toLocaleString('en-US');

/** The sandbox's limits as the node test routes' OpenAPI descriptions state them. */
export const SANDBOX_TEST_LIMITS =
  `A test runs for at most ${NODE_TEST_TIMEOUT_SECONDS} s, whatever the node's \`timeoutSeconds\` (tests are ` +
  "interactive, and share the sandbox threads with every organization's pipelines). An expression or code " +
  `that goes past a sandbox limit answers its error: \`timeout\`, \`memory_exceeded\` (JavaScript: ` +
  `${memoryBytes / 1048576} MiB; JSONata: sequences of ${count(SEQUENCE_LIMIT)} items, strings of ` +
  `${count(STRING_LIMIT)} characters, the thread's ${WORKER_HEAP_MB} MiB), \`result_too_large\` ` +
  `(\`result too large: N bytes, limit ${maxResultBytes}\`, N being the UTF-8 bytes of the output's JSON, or ` +
  `"more than ${maxResultBytes}" where the sandbox stopped writing it at the limit), \`result_invalid\` ` +
  `(a cycle, or nesting deeper than ${maxDepth} levels).`;

export interface NodeTestRequest {
  input?: unknown;
  trigger?: unknown;
  /** `$node`: outputs by node name. */
  nodes?: Record<string, unknown>;
  confirmWrites?: boolean;
}

export interface NodeTestDeps {
  sandbox: Sandbox;
  publish: (organizationId: string, topic: string, value: unknown, quality?: number) => Promise<void>;
  /** Data and integration nodes' services; a tested node's state lives in memory for the request only. */
  services?: NodeServices;
}

/**
 * Runs one node as the engine would, storing nothing. `path` is the JSON pointer of the node in the
 * request (`/node`) for error messages. Bad parameters: 400 with `problems`; a node with a side effect
 * needs `confirmWrites: true`; a failing node answers its error.
 */
export async function runNodeTest(
  organizationId: string,
  candidate: Record<string, unknown>,
  request: NodeTestRequest,
  deps: NodeTestDeps,
  path = '/node',
) {
  let node: PipelineNode;
  try {
    [node] = checkNodes([candidate]) as [PipelineNode];
  } catch (error) {
    if (error instanceof PipelineInputError) {
      const at = error.path.replace(/^\/nodes\/0/, path);
      throw withDetails(badRequest(`${at}: ${error.message.slice(error.path.length + 2)}`), { path: at });
    }
    throw error;
  }
  const type = nodeType(node.type);
  if (!type)
    throw withDetails(badRequest(`${path}/type: is not a known node type: ${JSON.stringify(node.type)}`), {
      path: `${path}/type`,
    });
  const problems = graphProblems([node], [])
    .filter((p) => p.path.startsWith('/nodes/0/'))
    .map((p) => ({ ...p, nodeId: null, path: p.path.replace(/^\/nodes\/0/, path) }));
  if (problems.length > 0)
    throw withDetails(badRequest(`${problems[0]!.path}: ${problems[0]!.message}`), {
      path: problems[0]!.path,
      problems,
    });
  const effect = await sideEffectOfNode(type, node.parameters, { organizationId, services: deps.services });
  if (effect !== 'none' && request.confirmWrites !== true)
    throw withDetails(
      badRequest(
        `/confirmWrites: ${type.type} has side effect ${effect}; send confirmWrites: true to really run it`,
      ),
      { path: '/confirmWrites' },
    );
  const context: NodeContext = {
    organizationId,
    parameters: node.parameters,
    input: request.input ?? null,
    trigger: request.trigger ?? null,
    nodes: Object.fromEntries(Object.entries(request.nodes ?? {}).map(([k, v]) => [k, { data: v }])),
    sandbox: deps.sandbox,
    timeoutMs: Math.min(node.settings?.timeoutSeconds ?? 10, NODE_TEST_TIMEOUT_SECONDS) * 1000,
    attempt: 1,
    publish: (topic, value, quality) => deps.publish(organizationId, topic, value, quality),
    services: deps.services && { ...deps.services, state: new MemoryNodeState() },
  };
  const started = Date.now();
  try {
    const result = await type.run(context);
    return {
      output: result.output ?? null,
      port: result.port as string | null,
      durationMs: Date.now() - started,
      logs: result.logs ?? [],
      error: null,
    };
  } catch (error) {
    if (!(error instanceof SandboxError || error instanceof NodeError)) throw error;
    return {
      output: null,
      port: null,
      durationMs: Date.now() - started,
      logs: [] as string[],
      error: { code: error.code, message: error.message },
    };
  }
}
