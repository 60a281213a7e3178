/** One event of a `text/event-stream`: its type (`message` when the frame names none) and its data. */
export interface StreamEvent {
  type: string;
  data: string;
}

/**
 * The events of a `text/event-stream` body, parsed as the HTML Living Standard says (§9.2.6): lines end
 * in CR, LF or CRLF; `event` names the type; `data` lines are joined by LF; a blank line dispatches;
 * lines starting with `:` are comments (heartbeats). `id` and `retry` are ignored: the caller reconnects
 * on its own terms. Read with fetch rather than EventSource, which cannot send the organization header.
 * Stopping the iteration cancels the body.
 */
export async function* readEventStream(body: ReadableStream<Uint8Array>): AsyncGenerator<StreamEvent> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let type = '';
  let data: string[] = [];
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      for (;;) {
        const end = buffer.search(/[\r\n]/);
        // A CR at the very end may be the first half of a CRLF: wait for the next chunk.
        if (end < 0 || (buffer[end] === '\r' && end === buffer.length - 1)) break;
        const line = buffer.slice(0, end);
        buffer = buffer.slice(buffer.startsWith('\r\n', end) ? end + 2 : end + 1);
        if (line === '') {
          if (data.length > 0) yield { type: type || 'message', data: data.join('\n') };
          type = '';
          data = [];
          continue;
        }
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const text = colon < 0 ? '' : line.slice(colon + (line[colon + 1] === ' ' ? 2 : 1));
        if (field === 'event') type = text;
        else if (field === 'data') data.push(text);
      }
    }
  } finally {
    reader.cancel().catch(() => {});
  }
}
