import { type NodeKey, splitKey, type UnresolvedReference } from './edges/dependency-graph.js';
import type { EntityType } from './edges/references.js';
import type { EntityFacts } from './entity-directory.js';
import type { EntityKinds } from './kinds/entity-kinds.js';

/** A node as the API shows it. */
export interface NodeView {
  key: string;
  type: EntityType;
  /** The entity id or the topic path or filter; null when redacted topic. */
  id: string | null;
  name: string | null;
  status?: string | null;
  connectionId?: string;
  /** The reference names something this organization does not have (deleted, or never existed). */
  missing?: true;
  /** The caller lacks the read scope of this type. */
  redacted?: true;
  /** A topic text with `+` or `#`. */
  filter?: true;
  /** References only known at run time (`{{ expr }}`). */
  unresolved?: UnresolvedReference[];
}

/**
 * Turns node keys into views for one caller: names and states from the directory, types whose read
 * scope (its kind's) the caller lacks redacted (a redacted topic also loses its path, which is its
 * identity: it gets a stand-in key).
 */
export class NodePresenter {
  private readonly redactedTopics = new Map<NodeKey, string>();

  constructor(
    private readonly kinds: EntityKinds,
    private readonly facts: ReadonlyMap<NodeKey, EntityFacts>,
    private readonly scopes: ReadonlySet<string>,
    private readonly unresolved: ReadonlyMap<NodeKey, UnresolvedReference[]> = new Map(),
  ) {}

  canRead(type: EntityType): boolean {
    return this.scopes.has(this.kinds.readScope(type));
  }

  /** The key the caller sees (a stand-in for a redacted topic). */
  key(key: NodeKey): string {
    const { type } = splitKey(key);
    if (type !== 'topic' || this.canRead('topic')) return key;
    let standIn = this.redactedTopics.get(key);
    if (!standIn) {
      standIn = `topic:redacted-${this.redactedTopics.size + 1}`;
      this.redactedTopics.set(key, standIn);
    }
    return standIn;
  }

  view(key: NodeKey): NodeView {
    const { type, id } = splitKey(key);
    if (!this.canRead(type)) {
      return { key: this.key(key), type, id: type === 'topic' ? null : id, name: null, redacted: true };
    }
    if (type === 'topic') {
      const filter = id.split('/').some((s) => s === '+' || s === '#');
      return { key, type, id, name: id, ...(filter ? { filter: true as const } : {}) };
    }
    const facts = this.facts.get(key);
    if (!facts) return { key, type, id, name: null, missing: true };
    const unresolved = this.unresolved.get(key);
    return {
      key,
      type,
      id,
      name: facts.name,
      status: facts.status,
      ...(facts.connectionId ? { connectionId: facts.connectionId } : {}),
      ...(unresolved ? { unresolved } : {}),
    };
  }

  /** For reasons: `pipeline 'Avg'`, `topic v1/a/b`, `a connection` when the caller cannot read it. */
  label(key: NodeKey): string {
    const { type, id } = splitKey(key);
    if (!this.canRead(type)) return `a ${type}`;
    if (type === 'topic')
      return `${id.split('/').some((s) => s === '+' || s === '#') ? 'filter' : 'topic'} ${id}`;
    const facts = this.facts.get(key);
    return facts ? `${type} '${facts.name}'` : `a missing ${type} (${id})`;
  }
}
