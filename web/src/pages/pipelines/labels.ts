/** A parameter's label from its schema: its `title`, else its key in words ("timeoutSeconds" → "Timeout seconds"). */
export function humanLabel(key: string, title?: string): string {
  if (title) return title;
  const words = key
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/[_-]+/g, ' ')
    .trim()
    .toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
}
