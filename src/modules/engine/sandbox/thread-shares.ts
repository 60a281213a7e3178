import type { Worker } from 'node:worker_threads';
import type { OrganizationQueues } from './organization-queues.js';
import type { SandboxLimits, SandboxResult } from './sandbox-limits.js';
import type { Task } from './sandbox-tasks.js';
import { newProgress } from './sandbox-thread.js';

/** An evaluation submitted and not yet answered. */
export interface Pending {
  organizationId: string;
  /** The task as it is sent (sandbox-tasks.ts, wire). */
  task: Task | string;
  /** Its place in the order its thread was sent evaluations (0 until sent). */
  seq: number;
  limits: SandboxLimits;
  /** How often a thread it was sent to was lost while it waited there or had ended it unanswered. */
  lost: number;
  resolve: (result: SandboxResult) => void;
  reject: (error: Error) => void;
}

/** One sandbox thread and the evaluations sent to it, in order: none of those before the first is unanswered. */
export interface Slot {
  worker: Worker | undefined;
  sent: Pending[];
  /** The `seq` of the last evaluation sent to the thread (and to the ones it replaced). */
  seq: number;
  /** RUNNING, SINCE and ENDED (sandbox-thread.ts), written by the thread as it goes. */
  progress: BigInt64Array;
  /** The organization whose evaluations the thread has in flight: one at a time, never two. */
  holder: string | undefined;
  /** Started past the pool's size for an organization kept waiting (EXTRA_AFTER_MS); ends once idle. */
  extra: boolean;
  idleSince: number;
}

/**
 * Evaluations sent to one thread ahead of its answers, so that it never waits for the main thread
 * between two; it runs them one after another, in order. They go in one message per thread and turn of
 * the event loop, and the thread answers those it ended in one message too: a message costs about as
 * much as the evaluation of a small expression.
 */
export const IN_FLIGHT_PER_THREAD = 64;
/** An organization kept this long from every thread by others' evaluations gets a thread of its own. */
export const EXTRA_AFTER_MS = 100;

const newSlot = (extra: boolean): Slot => ({
  worker: undefined,
  sent: [],
  seq: 0,
  progress: newProgress(),
  holder: undefined,
  extra,
  idleSince: 0,
});

/**
 * The pool's threads and which organization holds each: the rule of who may send evaluations to which
 * thread (see the Sandbox class comment). An organization alone may hold every thread. While others
 * wait, it may hold its share (the pool's size over the organizations with work in flight or waiting,
 * at least one): it gets no idle thread past its share, and it adds no more to the threads it holds
 * when it holds more than its share, so that they drain and go to the others in turn.
 */
export class ThreadShares {
  readonly slots: Slot[];
  /** How many threads each organization holds (has evaluations in flight on). */
  private readonly held = new Map<string, number>();

  constructor(
    /** The pool's size (extra threads come on top, as many at most). */
    private readonly threads: number,
    private readonly queue: OrganizationQueues<Pending>,
  ) {
    this.slots = Array.from({ length: threads }, () => newSlot(false));
  }

  /**
   * The thread `organizationId`'s next evaluation goes to: an idle started one, else one not started yet,
   * else the least busy one it already holds with room; within its share while others wait, or an extra
   * thread when it waited EXTRA_AFTER_MS below its share with every thread held by others. None: it waits.
   */
  slotFor(organizationId: string): Slot | undefined {
    let idle: Slot | undefined;
    let unstarted: Slot | undefined;
    let own: Slot | undefined;
    for (const slot of this.slots) {
      if (slot.sent.length === 0) {
        if (!slot.worker) unstarted ??= slot;
        else if (!idle || (idle.extra && !slot.extra)) idle = slot;
      } else if (
        slot.holder === organizationId &&
        slot.sent.length < IN_FLIGHT_PER_THREAD &&
        (!own || slot.sent.length < own.sent.length)
      )
        own = slot;
    }
    const held = this.held.get(organizationId) ?? 0;
    const share = this.shareOf(organizationId);
    if (held < share && (idle || unstarted)) return idle ?? unstarted;
    if (own && (held <= share || !this.queue.othersWait(organizationId))) return own;
    if (held >= share || share === Number.POSITIVE_INFINITY) return undefined;
    if (this.queue.waitedMs(organizationId) < EXTRA_AFTER_MS || this.slots.length >= 2 * this.threads)
      return undefined;
    const extra = newSlot(true);
    this.slots.push(extra);
    return extra;
  }

  /** `slot` (idle until now) has evaluations of `organizationId` in flight. */
  hold(slot: Slot, organizationId: string): void {
    slot.holder = organizationId;
    this.held.set(organizationId, (this.held.get(organizationId) ?? 0) + 1);
  }

  /** `slot` has nothing in flight any more: its organization holds one thread fewer. */
  release(slot: Slot): void {
    const holder = slot.holder;
    if (holder === undefined) return;
    slot.holder = undefined;
    slot.idleSince = Date.now();
    const count = (this.held.get(holder) ?? 1) - 1;
    if (count > 0) this.held.set(holder, count);
    else this.held.delete(holder);
  }

  /** Takes an extra thread out of the pool (it ended, idle). */
  remove(slot: Slot): void {
    this.slots.splice(this.slots.indexOf(slot), 1);
  }

  clear(): void {
    this.held.clear();
    for (const slot of this.slots) slot.holder = undefined;
  }

  /** The threads `organizationId` may hold: all when it is the only organization with work, else its share. */
  private shareOf(organizationId: string): number {
    const holders = this.held.size;
    if (this.queue.organizations <= 1 && (holders === 0 || (holders === 1 && this.held.has(organizationId))))
      return Number.POSITIVE_INFINITY;
    const active = new Set([...this.held.keys(), ...this.queue.turns(), organizationId]);
    return Math.max(1, Math.floor(this.threads / active.size));
  }
}
