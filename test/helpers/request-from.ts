import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';

/** An answer to `requestFrom`: the address it came from, its status, headers and body (JSON parsed). */
export interface Answer {
  from: string;
  status: number;
  headers: IncomingHttpHeaders;
  body: any;
}

/**
 * One request on a new connection from `from`, a loopback address (any 127.x.y.z reaches the server on
 * 127.0.0.1): real distinct client addresses, as the server sees them without a proxy.
 */
export function requestFrom(
  from: string,
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, {
      method: init.method ?? 'GET',
      headers: init.headers,
      localAddress: from,
      agent: false,
    });
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
      });
      res.on('end', () => {
        const json = (res.headers['content-type'] ?? '').includes('json') && text !== '';
        resolve({
          from,
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: json ? JSON.parse(text) : text,
        });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(init.body);
  });
}
