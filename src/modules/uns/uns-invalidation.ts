/**
 * Invalidation-bus topics of the unified namespace. Every replica caches what these name and evicts it
 * when the topic arrives (and everything on `*`, which the PostgreSQL bus sends after a gap).
 */
export const UNS_TOPICS = {
  /** The stored UNS settings changed: reload them, re-apply the broker. No id. */
  settings: 'uns.settings.changed',
  /** A schema version or binding of an organization changed; id: the organization id. */
  bindings: 'uns.bindings.changed',
  /**
   * Topic nodes were deleted; id: `<organization id>|<path>` (the node and its subtree), or
   * `<organization id>|` for every topic of the organization.
   */
  topicsDeleted: 'uns.topics.deleted',
} as const;

/** The id of a `uns.topics.deleted` event. */
export function topicsDeletedId(organizationId: string, path = ''): string {
  return `${organizationId}|${path}`;
}

/** Splits the id of a `uns.topics.deleted` event; `path` is empty for the whole organization. */
export function parseTopicsDeletedId(
  id: string | undefined,
): { organizationId: string; path: string } | null {
  const bar = id?.indexOf('|') ?? -1;
  if (!id || bar <= 0) return null;
  return { organizationId: id.slice(0, bar), path: id.slice(bar + 1) };
}
