/**
 * react-draggable (under react-grid-layout) adds a `<style id="react-draggable-style-el">` to the page
 * at the first drag, to hide text selection while dragging. The console's Content-Security-Policy
 * (`style-src 'self'`) refuses inline styles, so the browser blocks it and logs a violation. The library
 * looks the element up by id and creates it only when absent: an inert element with that id keeps it
 * from trying, and dashboards.css carries the same rules. The console end-to-end test
 * (console-dashboards.test.ts) fails on the violation if an upgrade changes the id.
 */
export function preventDraggableStyleInjection(doc: Document = document): void {
  const id = 'react-draggable-style-el';
  if (doc.getElementById(id)) return;
  const placeholder = doc.createElement('meta');
  placeholder.id = id;
  doc.head.appendChild(placeholder);
}
