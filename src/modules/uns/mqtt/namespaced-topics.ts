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
