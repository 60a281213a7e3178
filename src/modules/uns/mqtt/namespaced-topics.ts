/** Most namespaced topics remembered: anyone can publish new topics, so a full cache starts over. */
export const REMEMBERED_NAMESPACED_TOPICS = 10_000;

/**
 * The broker's internal topic (namespace + topic) of each topic published, built once per distinct
 * topic and shared. `namespace + topic` makes a new rope for every message, which aedes flattens into a
 * second copy as soon as it reads it (its level count, then its topic trie): two strings per message,
 * held until the value is relayed. A remembered topic is built flat (Array.join) and allocates nothing.
 */
export class NamespacedTopics {
  private readonly byNamespace = new Map<string, Map<string, string>>();
  private size = 0;

  /** `namespace` + `topic`, the same string for every message of the topic. */
  of(namespace: string, topic: string): string {
    return this.byNamespace.get(namespace)?.get(topic) ?? this.remember(namespace, topic);
  }

  private remember(namespace: string, topic: string): string {
    if (this.size >= REMEMBERED_NAMESPACED_TOPICS) {
      this.byNamespace.clear();
      this.size = 0;
    }
    let topics = this.byNamespace.get(namespace);
    if (topics === undefined) {
      topics = new Map();
      this.byNamespace.set(namespace, topics);
    }
    const namespaced = [namespace, topic].join('');
    topics.set(topic, namespaced);
    this.size++;
    return namespaced;
  }
}

/**
 * The topic a subscriber is sent for an internal topic: without its namespace, as UTF-8 bytes, made once
 * per distinct topic. Slicing the namespace off made a string a delivery, which the socket's write then
 * encoded again; with bytes, every piece of a delivery is a buffer, and the batched write of a turn's
 * deliveries copies them as they are.
 */
export class ForwardedTopics {
  private readonly bytes = new Map<string, Buffer>();

  /** `internal` without its first `namespaceLength` characters, as UTF-8. */
  of(internal: string, namespaceLength: number): Buffer {
    let topic = this.bytes.get(internal);
    if (topic === undefined) {
      if (this.bytes.size >= REMEMBERED_NAMESPACED_TOPICS) this.bytes.clear();
      topic = Buffer.from(internal.slice(namespaceLength), 'utf8');
      this.bytes.set(internal, topic);
    }
    return topic;
  }
}
