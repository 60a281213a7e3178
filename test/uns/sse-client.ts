import { request as httpRequest, type IncomingMessage } from 'node:http';

/** One frame of a `text/event-stream`: an event, or a comment line. */
export interface SseFrame {
  event: string;
  data: string;
  comment?: string;
}

/** An open Server-Sent Events response read over node:http, frame by frame, as a test looks at it. */
export interface SseStream {
  status: number;
  headers: Headers;
  /** Every frame so far (events and comments), in order. */
  frames: SseFrame[];
  /** The `value` events so far, parsed. */
  values(): Record<string, unknown>[];
  /** Resolves with the first frame (already received or later) that `match` accepts. */
  next(match: (frame: SseFrame) => boolean, what: string, timeoutMs?: number): Promise<SseFrame>;
  /** Resolves when the server ended the response. */
  ended: Promise<void>;
  /** Starts reading a stream opened with `paused` (until then the client reads nothing). */
  resume(): void;
  close(): void;
}

export interface SseRequest {
  token?: string;
  cookie?: string;
  org?: string;
  /** Opens the stream without reading it: a slow client. */
  paused?: boolean;
}

/**
 * Opens `url` as an event stream (HTML Living Standard §9.2 parsing: fields up to the first colon,
 * `data` lines joined by newlines, a blank line ends a frame). A non-200 answer is returned with its
 * JSON body and no frames.
 */
export async function openSse(
  url: string,
  credential: SseRequest,
): Promise<SseStream & { body?: Record<string, unknown> }> {
  const headers: Record<string, string> = { accept: 'text/event-stream' };
  if (credential.token) headers.authorization = `Bearer ${credential.token}`;
  if (credential.cookie) headers.cookie = credential.cookie;
  if (credential.org) headers['x-organization-id'] = credential.org;
  // node:http with a connection of its own: closing the stream closes exactly that socket.
  const { response, close } = await new Promise<{ response: IncomingMessage; close: () => void }>(
    (resolve, reject) => {
      const req = httpRequest(url, { headers, agent: false }, (res) =>
        resolve({ response: res, close: () => req.destroy() }),
      );
      req.once('error', reject);
      req.end();
    },
  );
  const responseHeaders = new Headers();
  for (const [name, value] of Object.entries(response.headers)) {
    if (typeof value === 'string') responseHeaders.set(name, value);
  }
  const status = response.statusCode ?? 0;
  const frames: SseFrame[] = [];
  const waiters = new Set<() => void>();
  const notify = () => {
    for (const waiter of [...waiters]) waiter();
  };
  let finished = false;

  if (status !== 200) {
    let text = '';
    for await (const chunk of response) text += chunk;
    close();
    return {
      status,
      headers: responseHeaders,
      body: JSON.parse(text) as Record<string, unknown>,
      frames,
      values: () => [],
      next: () => Promise.reject(new Error(`no stream: ${status}`)),
      ended: Promise.resolve(),
      resume: () => {},
      close: () => {},
    };
  }

  let start: () => void = () => {};
  const started = new Promise<void>((resolve) => {
    start = resolve;
  });
  if (!credential.paused) start();
  const ended = (async () => {
    await started;
    response.setEncoding('utf8');
    let buffer = '';
    let frame: SseFrame = { event: 'message', data: '' };
    let dataLines: string[] = [];
    try {
      for await (const value of response) {
        buffer += value as string;
        let newline = buffer.indexOf('\n');
        while (newline >= 0) {
          const line = buffer.slice(0, newline).replace(/\r$/, '');
          buffer = buffer.slice(newline + 1);
          newline = buffer.indexOf('\n');
          if (line === '') {
            if (dataLines.length > 0) frames.push({ ...frame, data: dataLines.join('\n') });
            frame = { event: 'message', data: '' };
            dataLines = [];
            notify();
          } else if (line.startsWith(':')) {
            frames.push({ event: 'comment', data: '', comment: line.slice(1).trim() });
            notify();
          } else {
            const colon = line.indexOf(':');
            const field = colon < 0 ? line : line.slice(0, colon);
            const text = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
            if (field === 'event') frame.event = text;
            else if (field === 'data') dataLines.push(text);
          }
        }
      }
    } catch {
      // closed by close()
    } finally {
      finished = true;
      notify();
    }
  })();

  return {
    status,
    headers: responseHeaders,
    frames,
    values: () => frames.filter((f) => f.event === 'value').map((f) => JSON.parse(f.data)),
    next(match, what, timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        let checked = 0;
        const check = () => {
          for (; checked < frames.length; checked++) {
            if (match(frames[checked]!)) {
              done();
              resolve(frames[checked]!);
              return;
            }
          }
          if (finished) {
            done();
            reject(new Error(`the stream ended before ${what}`));
          }
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(`timed out waiting for ${what}`));
        }, timeoutMs);
        const done = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
    ended,
    resume: start,
    close,
  };
}

/** Whether a frame is the value event of `topic` (and, when given, of `value`). */
export const isValue =
  (topic: string, value?: unknown) =>
  (frame: SseFrame): boolean => {
    if (frame.event !== 'value') return false;
    const data = JSON.parse(frame.data) as { topic: string; value: unknown };
    return (
      data.topic === topic && (value === undefined || JSON.stringify(data.value) === JSON.stringify(value))
    );
  };
