/**
 * Topic ids by organization and path, as the historian writer learned them from committed rows. Nested
 * maps (organization, then path): a lookup per record costs no key string built for it.
 */
export class TopicIdCache {
  private readonly byOrganization = new Map<string, Map<string, number>>();
  private entries = 0;

  constructor(private readonly limit: number) {}

  /** The ids of one organization's topics (a live view; empty when none are known). */
  of(organizationId: string): ReadonlyMap<string, number> {
    return this.byOrganization.get(organizationId) ?? EMPTY;
  }

  /** Remembers committed ids; forgets everything first when the cache would outgrow its limit. */
  learn(learned: ReadonlyMap<string, ReadonlyMap<string, number>>): void {
    let added = 0;
    for (const ids of learned.values()) added += ids.size;
    if (this.entries + added > this.limit) this.clear();
    for (const [organizationId, ids] of learned) {
      let known = this.byOrganization.get(organizationId);
      if (!known) {
        known = new Map();
        this.byOrganization.set(organizationId, known);
      }
      for (const [path, id] of ids) {
        if (!known.has(path)) this.entries++;
        known.set(path, id);
      }
    }
  }

  /** Forgets `path` and every path below it in one organization. */
  forgetSubtree(organizationId: string, path: string): void {
    const known = this.byOrganization.get(organizationId);
    if (!known) return;
    const below = `${path}/`;
    for (const key of known.keys()) {
      if (key === path || key.startsWith(below)) {
        known.delete(key);
        this.entries--;
      }
    }
  }

  /** Forgets everything. */
  clear(): void {
    this.byOrganization.clear();
    this.entries = 0;
  }
}

const EMPTY: ReadonlyMap<string, number> = new Map();
