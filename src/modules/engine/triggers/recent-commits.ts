import type { CommitJob } from '../../uns/historian/historian-writer.js';
import type { Quality, UnsValue } from '../../uns/publishing/record-fields.js';

/** A committed value as a trigger sees it. */
export interface TriggerValue {
  topic: string;
  source: string | null;
  /** The value's JSON text, parsed only for a value a trigger takes. */
  valueJson: string;
  /** The parsed value, when at hand (a live commit's). */
  value?: UnsValue;
  quality: Quality;
  timestampUs: number;
}

/** A value remembered by RecentCommits, with the time its commit was received. */
export interface RecentValue extends TriggerValue {
  receivedUs: number;
}

/** Bytes of a chunk: a job larger than this gets a chunk of its own size. */
const CHUNK_BYTES = 256 * 1024;
/** Emptied chunks kept for reuse, so that a steady rate allocates none. */
const SPARE_CHUNKS = 2;

interface Chunk {
  buffer: Buffer;
  used: number;
  /** When the newest commit written to it was received, epoch microseconds. */
  newestReceivedUs: number;
}

/**
 * A replica's commits of the last few seconds, kept for value triggers that become live after values
 * were committed (value-triggers.ts), encoded into buffers outside the JavaScript heap.
 *
 * Kept as the commits' own objects, every value published stayed alive for those seconds: each one
 * outlived two young-generation collections, was promoted to the old generation and died there, and
 * the old generation filled with them (about 2 MB a second at 5,000 mixed requests a second, a full
 * collection every 5-10 s, each pausing the event loop 6-16 ms). Encoded, a value costs a few buffer
 * writes when it is committed, and its text is decoded only when a trigger change asks for it, which is
 * rare.
 *
 * Layout of a job: byte length (u32), receivedUs (f64), organization id (u32 length, UTF-8), record count
 * (u32), then each record: timestampUs (f64), quality (u8), topic, source (i32 length, -1 for none),
 * valueJson. Jobs are appended in commit order; whole chunks are dropped once their newest job is older
 * than the horizon.
 */
export class RecentCommits {
  private chunks: Chunk[] = [];
  private spare: Buffer[] = [];

  /** Whether nothing is remembered. */
  get empty(): boolean {
    return this.chunks.length === 0;
  }

  /** Remembers a committed job. Cheap: called on the publish path for every commit. */
  add(job: CommitJob): void {
    let bound = 20 + 3 * job.organizationId.length;
    for (const { record } of job.records)
      bound += 25 + 3 * (record.topic.length + (record.source?.length ?? 0) + record.valueJson.length);
    const chunk = this.chunkFor(bound);
    const buffer = chunk.buffer;
    const start = chunk.used;
    let at = start + 4;
    buffer.writeDoubleLE(job.receivedUs, at);
    at = writeText(buffer, at + 8, job.organizationId);
    buffer.writeUInt32LE(job.records.length, at);
    at += 4;
    for (const { record, quality } of job.records) {
      buffer.writeDoubleLE(record.timestampUs, at);
      buffer[at + 8] = quality;
      at = writeText(buffer, at + 9, record.topic);
      if (record.source === null) {
        buffer.writeInt32LE(-1, at);
        at += 4;
      } else at = writeText(buffer, at, record.source);
      at = writeText(buffer, at, record.valueJson);
    }
    buffer.writeUInt32LE(at - start, start);
    chunk.used = at;
    chunk.newestReceivedUs = Math.max(chunk.newestReceivedUs, job.receivedUs);
  }

  /** Forgets the chunks whose every commit was received before `horizonUs`. */
  forgetBefore(horizonUs: number): void {
    let dropped = 0;
    while (dropped < this.chunks.length && this.chunks[dropped]!.newestReceivedUs < horizonUs) dropped++;
    for (const chunk of this.chunks.splice(0, dropped))
      if (chunk.buffer.length === CHUNK_BYTES && this.spare.length < SPARE_CHUNKS)
        this.spare.push(chunk.buffer);
  }

  /** Forgets everything. */
  clear(): void {
    this.chunks = [];
  }

  /** The values of the organization's commits received at or after `sinceUs`, in commit order. */
  *valuesOf(organizationId: string, sinceUs: number): Generator<RecentValue> {
    for (const { buffer, used } of this.chunks) {
      let at = 0;
      while (at < used) {
        const next = at + buffer.readUInt32LE(at);
        const receivedUs = buffer.readDoubleLE(at + 4);
        // The organization is decoded only for a commit recent enough.
        const [organization, afterOrganization] =
          receivedUs >= sinceUs ? readText(buffer, at + 12) : [undefined, 0];
        if (organization === organizationId) {
          let cursor = afterOrganization + 4;
          for (let count = buffer.readUInt32LE(afterOrganization); count > 0; count--) {
            const timestampUs = buffer.readDoubleLE(cursor);
            const quality = buffer[cursor + 8] as Quality;
            let topic: string;
            let source: string | null = null;
            let valueJson: string;
            [topic, cursor] = readText(buffer, cursor + 9);
            if (buffer.readInt32LE(cursor) < 0) cursor += 4;
            else [source, cursor] = readText(buffer, cursor);
            [valueJson, cursor] = readText(buffer, cursor);
            yield { receivedUs, topic, source, valueJson, quality, timestampUs };
          }
        }
        at = next;
      }
    }
  }

  /** The chunk the next job (at most `bound` bytes) goes into. */
  private chunkFor(bound: number): Chunk {
    const last = this.chunks[this.chunks.length - 1];
    if (last && last.buffer.length - last.used >= bound) return last;
    const buffer =
      bound <= CHUNK_BYTES
        ? (this.spare.pop() ?? Buffer.allocUnsafeSlow(CHUNK_BYTES))
        : Buffer.allocUnsafeSlow(bound);
    const chunk = { buffer, used: 0, newestReceivedUs: 0 };
    this.chunks.push(chunk);
    return chunk;
  }
}

/** Writes `text` as its UTF-8 byte length (u32) and bytes; answers the offset after it. */
function writeText(buffer: Buffer, at: number, text: string): number {
  const length = buffer.write(text, at + 4, 'utf8');
  buffer.writeUInt32LE(length, at);
  return at + 4 + length;
}

/** Reads a text written by writeText: the text and the offset after it. */
function readText(buffer: Buffer, at: number): [string, number] {
  const end = at + 4 + buffer.readUInt32LE(at);
  return [buffer.toString('utf8', at + 4, end), end];
}
