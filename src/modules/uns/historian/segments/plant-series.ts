import type { SegmentRow } from './segment-codec.js';

/** The kinds of series of a plant-like mix (issue 38's benchmark). */
export type PlantSeriesKind = 'float' | 'counter' | 'state' | 'boolean';

/** A deterministic PRNG (mulberry32), so that figures and tests repeat. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const STATES = ['Running', 'Idle', 'Stopped', 'Fault', 'Maintenance'];

/**
 * `count` values of one series 1 s apart from `startUs`, as a plant publishes them: floats as a random
 * walk with two decimals, counters that step up, text states and booleans that change rarely; quality
 * 0 (now and then 1), no source, received 1-40 ms after the declared time.
 */
export function plantSeries(
  kind: PlantSeriesKind,
  count: number,
  startUs: number,
  seed: number,
): SegmentRow[] {
  const random = seededRandom(seed);
  const rows: SegmentRow[] = [];
  let level = Math.round(random() * 10000) / 100;
  let counter = Math.floor(random() * 100000);
  let state = 0;
  let flag = false;
  for (let i = 0; i < count; i++) {
    const tsUs = startUs + i * 1_000_000;
    let valueJson: string;
    switch (kind) {
      case 'float':
        level = Math.round((level + (random() - 0.5) * 0.5) * 100) / 100;
        valueJson = JSON.stringify(level);
        break;
      case 'counter':
        counter += Math.floor(random() * 3);
        valueJson = JSON.stringify(counter);
        break;
      case 'state':
        if (random() < 0.002) state = Math.floor(random() * STATES.length);
        valueJson = JSON.stringify(STATES[state]);
        break;
      case 'boolean':
        if (random() < 0.005) flag = !flag;
        valueJson = JSON.stringify(flag);
        break;
    }
    rows.push({
      tsUs,
      valueJson,
      quality: random() < 0.001 ? 1 : 0,
      source: null,
      receivedUs: tsUs + 1000 + Math.floor(random() * 40_000),
    });
  }
  return rows;
}
