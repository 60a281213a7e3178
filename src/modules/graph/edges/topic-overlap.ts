/**
 * Whether two topic texts (paths or MQTT filters with `+` and `#`) can name one same topic: a topic a
 * pipeline publishes and a filter a dashboard shows are linked when they overlap. `+` matches one
 * segment, `#` any number of trailing segments including none (MQTT 3.1.1 §4.7.1.2: `a/#` matches `a`).
 */
export function topicsOverlap(a: string, b: string): boolean {
  if (a === b) return true;
  return overlapFrom(a.split('/'), 0, b.split('/'), 0);
}

function overlapFrom(a: string[], i: number, b: string[], j: number): boolean {
  while (true) {
    const x = a[i];
    const y = b[j];
    if (x === '#' || y === '#') return true;
    if (x === undefined || y === undefined) return x === undefined && y === undefined;
    if (x !== '+' && y !== '+' && x !== y) return false;
    i++;
    j++;
  }
}
