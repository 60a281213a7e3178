import { randomUUID } from 'node:crypto';
import type { Actor } from '../../platform/actor.js';

/** The bookkeeping members of a versioned row as a service holds it (models, pipelines). */
export interface Stamped {
  id: string;
  organizationId: string;
  version: number;
  createdAt: number;
  createdBy: string | null;
  updatedAt: number;
  updatedBy: string | null;
}

/** A new entity's row: `content`, version 1, made and changed now by `actor`. */
export function newRow<C extends object>(
  organizationId: string,
  content: C,
  actor: Actor,
  now: number,
  id: string = randomUUID(),
): C & Stamped {
  return {
    id,
    organizationId,
    ...content,
    version: 1,
    createdAt: now,
    createdBy: actor.userId,
    updatedAt: now,
    updatedBy: actor.userId,
  };
}

/** The row a save of `content` over `current` stores: the next version, changed now by `actor`. */
export function nextRow<R extends Stamped>(current: R, content: Partial<R>, actor: Actor, now: number): R {
  return { ...current, ...content, version: current.version + 1, updatedAt: now, updatedBy: actor.userId };
}
