import { useDeferredValue, useState } from 'react';
import { useNavigate, useSearchParams } from 'react-router';
import { EmptyState } from '../../components/states';
import { SparkplugNodes } from './sparkplug-nodes';
import { TopicDetail } from './topic-detail';
import { TopicTree } from './topic-tree';
import './uns-explorer.css';

/** The UNS explorer: the topic tree on the left, the selected topic (in the URL) on the right. */
export default function UnsExplorerPage() {
  const [search] = useSearchParams();
  const selected = search.get('topic');
  const [query, setQuery] = useState('');
  const deferred = useDeferredValue(query.trim());
  const navigate = useNavigate();
  const select = (path: string) => navigate(`/uns?topic=${encodeURIComponent(path)}`);

  return (
    <section className="page" aria-labelledby="uns-title">
      <header className="page-header">
        <div>
          <h1 id="uns-title">Unified namespace</h1>
          <p className="muted">Browse topics, watch their latest values and history.</p>
        </div>
      </header>
      <div className="explorer">
        <aside className="card explorer-tree">
          <label className="search">
            <span className="visually-hidden">Search topics</span>
            <input
              type="search"
              placeholder="Search topic paths"
              value={query}
              onChange={(event) => setQuery(event.target.value)}
            />
          </label>
          <TopicTree search={deferred} selected={selected} onSelect={select} />
          <SparkplugNodes onSelect={select} />
        </aside>
        <div className="explorer-detail">
          {selected ? (
            <TopicDetail key={selected} path={selected} />
          ) : (
            <EmptyState title="Choose a topic">
              <p>Open the tree on the left, or search by path.</p>
            </EmptyState>
          )}
        </div>
      </div>
    </section>
  );
}
