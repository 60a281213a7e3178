import type { EdgeNodeSettings } from '../sparkplug-edge.js';

/** Publishes into an organization's namespace of the broker (topic without the namespace). */
export type EdgePublish = (organizationId: string, topic: string, payload: Uint8Array) => void;

/** A message without the organization's namespace: topic and payload. */
export interface EdgeMessage {
  topic: string;
  payload: Uint8Array;
}

/** How the organizations' edge nodes reach a broker. */
export interface EdgeTransport {
  /**
   * Where committed values come from: this process's commits (one process takes every publish), or the
   * live channel on which every replica announces its commits (bridge mode: `heard`).
   */
  readonly hears: 'commits' | 'channel';
  /** The bdSeq of an organization's first session on this process. */
  readonly firstBdSeq: number;
  /**
   * Opens the node's session before its birth, `death` (its NDEATH, with the bdSeq the birth carries)
   * registered as the will where the transport has one; rejects when it cannot connect.
   */
  open(organizationId: string, settings: EdgeNodeSettings, death: EdgeMessage): Promise<void>;
  publish: EdgePublish;
  /** Ends the session once its NDEATH is published. */
  close(organizationId: string): void;
}

/** The transport of the embedded broker: every message published into the organization's namespace. */
export const publishingTransport = (publish: EdgePublish): EdgeTransport => ({
  hears: 'commits',
  firstBdSeq: 0,
  open: () => Promise.resolve(),
  publish,
  close: () => {},
});

/** Resolves once every one of `closing` has settled, or after `withinMs`, whichever comes first. */
export async function settledWithin(closing: Iterable<Promise<unknown>>, withinMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, withinMs);
  });
  await Promise.race([Promise.all(closing), timeout]);
  clearTimeout(timer);
}
