import type { ReactNode } from 'react';

/** Inline Markdown: `code`, **bold**, *italic*. Text stays text: HTML in it is shown, never run. */
function inline(text: string, key: string): ReactNode[] {
  const out: ReactNode[] = [];
  const pattern = /(`[^`]+`|\*\*[^*]+\*\*|\*[^*]+\*)/g;
  let last = 0;
  let n = 0;
  for (const match of text.matchAll(pattern)) {
    if (match.index > last) out.push(text.slice(last, match.index));
    const token = match[0];
    const k = `${key}-${n++}`;
    if (token.startsWith('`')) out.push(<code key={k}>{token.slice(1, -1)}</code>);
    else if (token.startsWith('**')) out.push(<strong key={k}>{token.slice(2, -2)}</strong>);
    else out.push(<em key={k}>{token.slice(1, -1)}</em>);
    last = match.index + token.length;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

/**
 * A small Markdown reading (headings, lists, paragraphs, inline code, bold, italic) built as React
 * elements: any HTML in the text is escaped by React, never parsed.
 */
export function Markdown({ text }: { text: string }) {
  const blocks: ReactNode[] = [];
  let list: string[] = [];
  let paragraph: string[] = [];
  const flush = () => {
    if (paragraph.length) {
      blocks.push(<p key={`p${blocks.length}`}>{inline(paragraph.join(' '), `p${blocks.length}`)}</p>);
      paragraph = [];
    }
    if (list.length) {
      const k = `l${blocks.length}`;
      blocks.push(
        <ul key={k}>
          {list.map((item, i) => {
            const itemKey = `${k}-${i}`;
            return <li key={itemKey}>{inline(item, itemKey)}</li>;
          })}
        </ul>,
      );
      list = [];
    }
  };
  for (const line of text.split(/\r?\n/)) {
    const heading = /^(#{1,3})\s+(.*)$/.exec(line);
    const item = /^\s*[-*]\s+(.*)$/.exec(line);
    if (heading) {
      flush();
      const k = `h${blocks.length}`;
      const content = inline(heading[2]!, k);
      blocks.push(
        heading[1]!.length === 1 ? (
          <h3 key={k}>{content}</h3>
        ) : heading[1]!.length === 2 ? (
          <h4 key={k}>{content}</h4>
        ) : (
          <h5 key={k}>{content}</h5>
        ),
      );
    } else if (item) {
      if (paragraph.length) flush();
      list.push(item[1]!);
    } else if (line.trim() === '') flush();
    else {
      if (list.length) flush();
      paragraph.push(line.trim());
    }
  }
  flush();
  return <div className="markdown">{blocks}</div>;
}
