import type { BrowseDescriptionOptions, BrowseResult, ClientSession, ReferenceDescription } from 'node-opcua';
import { type BrowsedNode, DriverError } from './driver.js';

type Opcua = typeof import('node-opcua');

/** The Objects folder (Part 5 §8.2.4): where a browse without a node id starts and a browse path begins. */
export const OBJECTS_FOLDER = 'i=85';
const ROOT_FOLDER = 'i=84';
/** HierarchicalReferences (Part 5 §11.1): Organizes, HasComponent, HasProperty ... */
const HIERARCHICAL = 'i=33';
/** At most this many levels are walked up from a node to the Objects folder. */
const MAX_DEPTH = 32;

/** Where a walk up ends: the Objects folder or the root. */
const isTop = (id: string) => id === OBJECTS_FOLDER || id === `ns=0;${OBJECTS_FOLDER}` || id === ROOT_FOLDER;

function description(
  opcua: Opcua,
  nodeId: string,
  direction: 'forward' | 'inverse',
): BrowseDescriptionOptions {
  return {
    nodeId,
    referenceTypeId: HIERARCHICAL,
    includeSubtypes: true,
    browseDirection: direction === 'forward' ? opcua.BrowseDirection.Forward : opcua.BrowseDirection.Inverse,
    // Objects and variables: what a plant's tree is made of (methods, types and views are left out).
    nodeClassMask: direction === 'forward' ? opcua.NodeClass.Object | opcua.NodeClass.Variable : 0,
    resultMask: 0x3f,
  };
}

/** Fails with a `device` error when the server answered a browse with a bad status. */
function checked(result: BrowseResult, nodeId: string): BrowseResult {
  if (result.statusCode.isNotGood())
    throw new DriverError('device', `browsing ${nodeId} failed: ${result.statusCode.name}`);
  return result;
}

/** Every forward reference of each node, following continuation points. */
async function allReferences(
  opcua: Opcua,
  session: ClientSession,
  nodeIds: string[],
): Promise<ReferenceDescription[][]> {
  if (nodeIds.length === 0) return [];
  const results = await session.browse(nodeIds.map((id) => description(opcua, id, 'forward')));
  return Promise.all(
    results.map(async (first, i) => {
      let result = checked(first, nodeIds[i]!);
      const references = [...(result.references ?? [])];
      while (result.continuationPoint && result.continuationPoint.length > 0) {
        result = checked(await session.browseNext(result.continuationPoint, false), nodeIds[i]!);
        references.push(...(result.references ?? []));
      }
      return references;
    }),
  );
}

/** The name of each data type node (`i=11` → `Double`), read as its browse name in one request. */
async function dataTypeNames(
  opcua: Opcua,
  session: ClientSession,
  ids: string[],
): Promise<Map<string, string>> {
  const unique = [...new Set(ids)];
  if (unique.length === 0) return new Map();
  const values = await session.read(
    unique.map((nodeId) => ({ nodeId, attributeId: opcua.AttributeIds.BrowseName })),
  );
  return new Map(
    unique.map((id, i) => [id, (values[i]?.value.value as { name?: string } | null)?.name ?? id]),
  );
}

/**
 * A page of the children of `nodeId`: its hierarchical references to objects and variables, in the
 * server's order; a variable's data type by name, and whether each child has children of its own (read
 * for the page only).
 */
export async function browseChildren(
  opcua: Opcua,
  session: ClientSession,
  nodeId: string,
  page: { offset: number; limit: number },
): Promise<{ children: BrowsedNode[]; total: number }> {
  const [references = []] = await allReferences(opcua, session, [nodeId]);
  const slice = references.slice(page.offset, page.offset + page.limit);
  const ids = slice.map((r) => r.nodeId.toString());
  const below = await allReferences(opcua, session, ids);
  const variables = slice.flatMap((r, i) => (r.nodeClass === opcua.NodeClass.Variable ? [ids[i]!] : []));
  const types = variables.length
    ? await session.read(variables.map((id) => ({ nodeId: id, attributeId: opcua.AttributeIds.DataType })))
    : [];
  const typeOf = new Map(
    variables.map((id, i) => [id, (types[i]?.value.value as { toString(): string } | null)?.toString()]),
  );
  const names = await dataTypeNames(
    opcua,
    session,
    [...typeOf.values()].filter((t): t is string => !!t),
  );
  const children = slice.map((r, i): BrowsedNode => {
    const id = ids[i]!;
    const type = typeOf.get(id);
    return {
      nodeId: id,
      browseName: r.browseName.toString(),
      displayName: r.displayName.text ?? r.browseName.name ?? id,
      nodeClass: opcua.NodeClass[r.nodeClass] ?? String(r.nodeClass),
      dataType: type ? (names.get(type) ?? type) : null,
      hasChildren: (below[i]?.length ?? 0) > 0,
    };
  });
  return { children, total: references.length };
}

/**
 * The browse names (without their namespace index) from the Objects folder down to `nodeId`, found by
 * walking its inverse hierarchical references up; a node outside the Objects folder answers the path
 * from below the root. 400-like `configuration` error for a node the server does not know.
 */
export async function browsePathOf(opcua: Opcua, session: ClientSession, nodeId: string): Promise<string[]> {
  const name = await session.read({ nodeId, attributeId: opcua.AttributeIds.BrowseName });
  if (name.statusCode.isNotGood())
    throw new DriverError('configuration', `node ${nodeId} is not on the server (${name.statusCode.name})`);
  const path = [(name.value.value as { name: string }).name];
  let current = nodeId;
  for (let depth = 0; depth < MAX_DEPTH; depth++) {
    const [result] = await session.browse([description(opcua, current, 'inverse')]);
    const parent = result?.references?.[0];
    if (!parent) break;
    const parentId = parent.nodeId.toString();
    if (isTop(parentId)) break;
    path.unshift(parent.browseName.name ?? parentId);
    current = parentId;
  }
  return path;
}

/** Requests are cut into chunks of this many nodes (servers limit the nodes of one read or browse). */
const CHUNK = 500;

async function chunked<T, R>(items: T[], run: (chunk: T[]) => Promise<R[]>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += CHUNK) out.push(...(await run(items.slice(i, i + CHUNK))));
  return out;
}

/**
 * The browse paths of many nodes at once (what `browsePathOf` answers for one), walking up one level
 * for all of them per request, so siblings share their parents' walk: a subscription of thousands of
 * items costs a few requests a level. `null` for a node the server does not know.
 */
export async function browsePathsOf(
  opcua: Opcua,
  session: ClientSession,
  nodeIds: string[],
): Promise<(string[] | null)[]> {
  const unique = [...new Set(nodeIds)];
  const read = await chunked(unique, (ids) =>
    session.read(ids.map((nodeId) => ({ nodeId, attributeId: opcua.AttributeIds.BrowseName }))),
  );
  const nameOf = new Map<string, string>();
  unique.forEach((id, i) => {
    const value = read[i];
    if (value && !value.statusCode.isNotGood()) nameOf.set(id, (value.value.value as { name: string }).name);
  });
  const parentOf = new Map<string, { id: string; name: string } | null>();
  let pending = [...nameOf.keys()];
  for (let depth = 0; depth < MAX_DEPTH && pending.length > 0; depth++) {
    const results = await chunked(pending, (ids) =>
      session.browse(ids.map((id) => description(opcua, id, 'inverse'))),
    );
    const next = new Set<string>();
    pending.forEach((id, i) => {
      const parent = results[i]?.references?.[0];
      const parentId = parent?.nodeId.toString();
      if (!parent || !parentId || isTop(parentId)) {
        parentOf.set(id, null);
        return;
      }
      parentOf.set(id, { id: parentId, name: parent.browseName.name ?? parentId });
      if (!parentOf.has(parentId)) next.add(parentId);
    });
    pending = [...next].filter((id) => !parentOf.has(id));
  }
  return nodeIds.map((id) => {
    const name = nameOf.get(id);
    if (name === undefined) return null;
    const path = [name];
    let current = parentOf.get(id);
    for (let depth = 0; current && depth < MAX_DEPTH; depth++) {
      path.unshift(current.name);
      current = parentOf.get(current.id);
    }
    return path;
  });
}
