import { useEffect } from 'react';
import { useAsync } from '../../app/use-async';
import { formatNumber, formatTimestamp } from '../../components/format';
import { type SparkplugNode, sparkplugNodes } from './uns-api';

const REFRESH_MS = 10_000;

function OnlineDot({ online }: { online: boolean }) {
  return (
    <span
      className={`sparkplug-dot ${online ? 'sparkplug-online' : 'sparkplug-offline'}`}
      aria-hidden="true"
    />
  );
}

/**
 * The Sparkplug B edge nodes and devices that publish to the embedded broker: online or not, last birth,
 * sequence errors; each opens its place in the tree. Shown only when there are some.
 */
export function SparkplugNodes({ onSelect }: { onSelect: (path: string) => void }) {
  const { data, reload } = useAsync(sparkplugNodes, []);
  useEffect(() => {
    const timer = setInterval(reload, REFRESH_MS);
    return () => clearInterval(timer);
  }, [reload]);
  if (!data || data.length === 0) return null;
  return (
    <section className="sparkplug-nodes" aria-labelledby="sparkplug-title">
      <h2 id="sparkplug-title">Sparkplug edge nodes</h2>
      <ul>
        {data.map((node: SparkplugNode) => (
          <li key={`${node.groupId}/${node.edgeNodeId}`}>
            <button type="button" className="button-link" onClick={() => onSelect(node.topic)}>
              <OnlineDot online={node.online} />
              {node.groupId} / {node.edgeNodeId}
            </button>
            <span className="muted">
              {' '}
              {node.online ? 'online' : 'offline'} · {formatNumber(node.metrics)} metrics
              {node.lastBirthAt ? ` · born ${formatTimestamp(node.lastBirthAt)}` : ''}
              {node.seqErrors > 0 ? ` · ${formatNumber(node.seqErrors)} sequence errors` : ''}
            </span>
            {node.devices.length > 0 && (
              <ul>
                {node.devices.map((device) => (
                  <li key={device.deviceId}>
                    <button type="button" className="button-link" onClick={() => onSelect(device.topic)}>
                      <OnlineDot online={device.online} />
                      {device.deviceId}
                    </button>
                    <span className="muted"> {device.online ? 'online' : 'offline'}</span>
                  </li>
                ))}
              </ul>
            )}
          </li>
        ))}
      </ul>
    </section>
  );
}
