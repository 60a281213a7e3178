import DOMPurify from 'dompurify';
import { marked } from 'marked';
import { useMemo } from 'react';

/** Markdown to HTML (a block, or `inline` within a line), sanitized: no scripts, handlers or foreign elements. */
export function renderMarkdown(text: string, inline = false): string {
  const html = inline
    ? marked.parseInline(text, { async: false, gfm: true })
    : marked.parse(text, { async: false, gfm: true, breaks: false });
  return DOMPurify.sanitize(html, { USE_PROFILES: { html: true } });
}

/** A node type's or parameter's description, its Markdown rendered safely. */
export function MarkdownText(props: { text: string; className?: string; inline?: boolean }) {
  const html = useMemo(() => renderMarkdown(props.text, props.inline), [props.text, props.inline]);
  const Tag = props.inline ? 'span' : 'div';
  return (
    <Tag
      className={`markdown ${props.className ?? ''}`.trim()}
      // biome-ignore lint/security/noDangerouslySetInnerHtml: sanitized by DOMPurify just above.
      dangerouslySetInnerHTML={{ __html: html }}
    />
  );
}
