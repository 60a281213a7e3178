import { useEffect, useRef, useState } from 'react';
import { api, orgHeader, unwrap } from '../../api/client';
import type { ObjectSchema, Protocol } from './connections-api';

/**
 * Where a connection points, as its list shows it: the URL of URL-based protocols (OPC UA endpoint,
 * MQTT broker, REST base), else host:port with the protocol's default port when none is set.
 */
export function addressOf(config: Record<string, unknown>, protocol: Protocol | undefined): string {
  for (const key of ['endpointUrl', 'url', 'baseUrl']) {
    if (typeof config[key] === 'string') return config[key];
  }
  if (typeof config.host !== 'string') return '';
  const schema = (protocol?.configSchema ?? {}) as ObjectSchema;
  const port = config.port ?? schema.properties?.port?.default;
  return port === undefined ? config.host : `${config.host}:${String(port)}`;
}

export interface RuntimeLine {
  state: string;
  lastError: string | null;
  /** Requests a second between the last two reads; absent after the first. */
  rate?: number;
}

/**
 * The runtimes of the organization's connections (`GET /connections/runtime`), read every `everyMs`;
 * each connection's request rate is the change of its request counter between two reads.
 */
export function useRuntimes(everyMs: number): Map<string, RuntimeLine> {
  const [lines, setLines] = useState(new Map<string, RuntimeLine>());
  const last = useRef(new Map<string, { requests: number; at: number }>());
  useEffect(() => {
    let stopped = false;
    const read = async () => {
      try {
        const { data } = unwrap(
          await api.GET('/api/v1/connections/runtime', { params: { header: orgHeader() } }),
        );
        if (stopped) return;
        const at = Date.now();
        const next = new Map<string, RuntimeLine>();
        for (const r of data) {
          const before = last.current.get(r.connectionId);
          const seconds = before ? (at - before.at) / 1000 : 0;
          const rate =
            before && seconds > 0 && r.metrics.requests >= before.requests
              ? (r.metrics.requests - before.requests) / seconds
              : undefined;
          last.current.set(r.connectionId, { requests: r.metrics.requests, at });
          next.set(r.connectionId, {
            state: r.state,
            lastError: r.lastError,
            ...(rate !== undefined ? { rate } : {}),
          });
        }
        setLines(next);
      } catch {
        // The list shows its own error; the runtime columns stay as they were until the next read.
      }
    };
    void read();
    const timer = setInterval(() => void read(), everyMs);
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }, [everyMs]);
  return lines;
}
