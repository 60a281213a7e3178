/** What decides whether "Run now" can run the pipeline as the editor shows it. */
export interface RunContext {
  pipeline: { enabled: boolean; nodes: { type: string; disabled?: boolean }[] };
  problems: number;
  dirty: boolean;
  /** The organization role allows pipelines:write (Editor and above, or a System Administrator). */
  mayWrite: boolean;
  maintenance: { enabled: boolean; reason: string | null } | null;
  /** Owners, Admins and System Administrators may run during maintenance. */
  mayForce: boolean;
}

/**
 * Why "Run now" cannot run the pipeline, in words for its user; null when it can. The first reason
 * that applies is given (the one to fix first).
 */
export function runBlockedReason(c: RunContext): string | null {
  if (!c.mayWrite) return 'Your role may only read pipelines: running one needs Editor or above.';
  if (c.dirty) return 'Save your changes first: a run uses the saved version.';
  if (c.problems > 0)
    return `The graph has ${c.problems} problem${c.problems === 1 ? '' : 's'}: fix ${c.problems === 1 ? 'it' : 'them'} to run.`;
  if (!c.pipeline.enabled) return 'The pipeline is disabled: enable it to run it.';
  if (!c.pipeline.nodes.some((n) => n.type === 'trigger.manual' && !n.disabled))
    return 'The pipeline has no manual trigger node to start a run from.';
  if (c.maintenance?.enabled && !c.mayForce)
    return `Maintenance: ${c.maintenance.reason}. Only Owners and Admins may run pipelines now.`;
  return null;
}
