import { SegmentColumns } from './segment-columns.js';

/** MERIDIAN_UNS_SEGMENT_CACHE_MB's default: decoded segments kept in memory, at most this many bytes. */
export const DEFAULT_SEGMENT_CACHE_BYTES = 64 * 1024 * 1024;

interface Entry {
  /** The segment's stored bytes the columns were decoded from. */
  data: Uint8Array;
  columns: SegmentColumns;
  /** The bytes counted for it in the total. */
  bytes: number;
}

/**
 * Decoded segments, least recently used first out once their bytes pass `maxBytes`. An entry is found
 * by topic and day and served only when the segment's bytes just read from the database are the very
 * bytes it was decoded from: whatever changed a segment (a late merge, retention cutting a day, a
 * compaction, a purge, on this replica or another, or a restore) changed its bytes, so a changed
 * segment is decoded again and never answered from an older decoding. A deleted segment is no longer
 * read, so its entry is never served; it leaves with the least recently used.
 */
export class SegmentCache {
  private readonly entries = new Map<string, Entry>();
  private total = 0;
  hits = 0;
  misses = 0;

  constructor(private maxBytes = DEFAULT_SEGMENT_CACHE_BYTES) {}

  /** The columns of the segment of `topicId` and `dayUs` whose stored bytes are `data`. */
  columns(topicId: number, dayUs: number, data: Uint8Array): SegmentColumns {
    const key = `${topicId}:${dayUs}`;
    const known = this.entries.get(key);
    if (known !== undefined) {
      this.entries.delete(key);
      if (sameBytes(known.data, data)) {
        this.entries.set(key, known); // now the most recently used
        this.hits++;
        return known.columns;
      }
      this.total -= known.bytes;
    }
    this.misses++;
    const columns = new SegmentColumns(data);
    if (this.maxBytes <= 0) return columns;
    const entry: Entry = { data, columns, bytes: data.byteLength + columns.bytes };
    // Columns decoded later (a history page needs more than an aggregate) count as they come.
    columns.onGrow = (added) => {
      if (this.entries.get(key) !== entry) return;
      entry.bytes += added;
      this.total += added;
      this.evict();
    };
    this.entries.set(key, entry);
    this.total += entry.bytes;
    this.evict();
    return columns;
  }

  /** Sets the bound (0: nothing kept) and drops what is over it. */
  resize(maxBytes: number): void {
    this.maxBytes = maxBytes;
    this.evict();
  }

  /** Drops every entry (tests and benches measure cold reads with it). */
  clear(): void {
    this.entries.clear();
    this.total = 0;
  }

  /** Entries and the bytes they take. */
  get size(): { entries: number; bytes: number } {
    return { entries: this.entries.size, bytes: this.total };
  }

  private evict(): void {
    for (const [key, entry] of this.entries) {
      if (this.total <= this.maxBytes) return;
      this.entries.delete(key);
      this.total -= entry.bytes;
    }
  }
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.byteLength === b.byteLength && Buffer.compare(a, b) === 0;
}

/** The one cache of this process (its bound: MERIDIAN_UNS_SEGMENT_CACHE_MB, set at start). */
export const segmentCache = new SegmentCache();
