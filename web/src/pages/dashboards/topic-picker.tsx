import { useEffect, useState } from 'react';
import { ApiFailure } from '../../api/client';
import { latestValue, listTopics, type TopicItem } from '../uns/uns-api';

/** Finds topics by name for the panel editor; a topic without values is marked before it is picked. */
export function TopicPicker({ onPick }: { onPick: (path: string) => void }) {
  const [search, setSearch] = useState('');
  const [found, setFound] = useState<TopicItem[]>([]);
  useEffect(() => {
    const text = search.trim();
    if (text.length < 2) {
      setFound([]);
      return;
    }
    let stopped = false;
    const timer = setTimeout(() => {
      listTopics({ search: text }).then(
        (page) => !stopped && setFound(page.data),
        () => !stopped && setFound([]),
      );
    }, 250);
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [search]);
  return (
    <div className="dash-topic-picker">
      <input
        type="search"
        aria-label="Search topics"
        placeholder="Search topics to add"
        value={search}
        onChange={(e) => setSearch(e.target.value)}
      />
      {found.length > 0 && (
        <ul className="dash-topic-results" aria-label="Matching topics">
          {found.map((topic) => (
            <li key={topic.path}>
              <button
                type="button"
                onClick={() => {
                  onPick(topic.path);
                  setSearch('');
                }}
              >
                {topic.path}
                {!topic.hasValue && <span className="muted"> (no values)</span>}
              </button>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

/** Warnings for the listed topics that have no value (or do not exist): their panel would show No data. */
export function useTopicWarnings(topics: string[]): string[] {
  const [warnings, setWarnings] = useState<string[]>([]);
  const key = topics.join('\n');
  // biome-ignore lint/correctness/useExhaustiveDependencies: the joined list is the dependency.
  useEffect(() => {
    let stopped = false;
    const plain = topics.filter((t) => !t.includes('$') && !t.includes('+') && !t.includes('#'));
    const timer = setTimeout(() => {
      Promise.all(
        plain.map(async (topic) => {
          try {
            return (await latestValue(topic)) === null ? `${topic} has no values yet` : null;
          } catch (failure) {
            if (failure instanceof ApiFailure && failure.status === 404) return `${topic} does not exist yet`;
            if (failure instanceof ApiFailure && failure.status === 400)
              return `${topic}: ${failure.message}`;
            return null;
          }
        }),
      ).then((list) => !stopped && setWarnings(list.filter((w): w is string => w !== null)));
    }, 300);
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [key]);
  return warnings;
}
