/**
 * DynamoDB Streams for the simulation, as the Developer Guide promises it and no more:
 * - each change appears once, and a given item's changes appear in the order they were made;
 *   changes to *different* items carry no order promise, so here each record becomes readable
 *   after its own delay (a session's events may be read in any order across its items);
 * - records live in shards; an item's records go to the shard of its partition key, until a
 *   partition split (`split`) closes that shard and spreads its keys over two child shards by
 *   sort key, so one hot session's items can sit on two shards at once. A reader (the event
 *   source mapping) reads a child only after its parent is read to the end.
 * Records carry Lambda's `DynamoDBRecord` shape, with sequence numbers increasing along each
 * shard in the order records become readable.
 */
import type { DynamoDBRecord } from 'aws-lambda';
import type { Random } from '../kernel/random.ts';
import type { VirtualTime } from '../kernel/virtual-time.ts';
import type { ItemChange } from './simulated-dynamo.ts';

export interface StreamShard {
  id: string;
  parentId?: string;
  /** No record is added after this. */
  closed: boolean;
  /** Records in the order they become readable. */
  records: ShardRecord[];
}

export interface ShardRecord {
  readableAtMs: number;
  writtenAtMs: number;
  record: DynamoDBRecord;
  /** Set when first read: its sequence number in the shard. */
  sequence?: number;
}

export interface StreamOptions {
  time: VirtualTime;
  random: Random;
  /** Shards the stream starts with; partition keys are hashed over them. */
  shards: number;
  /** Typical delay before a record is readable (ms); a tail reaches `tailMs`. */
  delayMs: number;
  tailMs: number;
}

export class SimulatedStream {
  readonly shards: StreamShard[] = [];
  /** Partition key hash routes: the open shards, and for split ones their children. */
  private readonly routes = new Map<string, string[]>();
  private readonly lastReadableByItem = new Map<string, number>();
  private sequence = 1;
  private nextShard = 0;

  constructor(private readonly options: StreamOptions) {
    for (let index = 0; index < options.shards; index += 1) this.addShard();
  }

  private addShard(parentId?: string): StreamShard {
    const shard: StreamShard = { id: `shard-${String(this.nextShard++).padStart(3, '0')}`, ...(parentId === undefined ? {} : { parentId }), closed: false, records: [] };
    this.shards.push(shard);
    return shard;
  }

  /** The shard of a base partition hash: the first `options.shards` shards, or their children after splits. */
  private shardFor(pk: string, sk: string): StreamShard {
    const base = this.shards[hash(pk) % this.options.shards] as StreamShard;
    let shard = base;
    for (;;) {
      const children = this.routes.get(shard.id);
      if (children === undefined) return shard;
      shard = this.shards.find((candidate) => candidate.id === children[hash(`${pk}\u0000${sk}`) % children.length]) as StreamShard;
    }
  }

  /** A partition split: the shard holding `pk` closes; its keys go to two children by sort key from now on. */
  split(pk: string): void {
    const shard = this.shardFor(pk, '');
    if (shard.closed) return;
    shard.closed = true;
    const children = [this.addShard(shard.id), this.addShard(shard.id)];
    this.routes.set(shard.id, children.map((child) => child.id));
  }

  add(change: ItemChange): void {
    const pk = change.keys.pk?.S ?? '';
    const sk = change.keys.sk?.S ?? '';
    const shard = this.shardFor(pk, sk);
    const itemKey = `${pk}\u0000${sk}`;
    const delay = 1 + this.options.random.latency(this.options.delayMs, this.options.tailMs, 0.05);
    // A later change of the same item never overtakes an earlier one.
    const readableAtMs = Math.max(this.options.time.now() + delay, (this.lastReadableByItem.get(itemKey) ?? 0) + 0.001);
    this.lastReadableByItem.set(itemKey, readableAtMs);
    const record: DynamoDBRecord = {
      eventID: `e${this.sequence++}`,
      eventName: change.eventName,
      eventVersion: '1.1',
      eventSource: 'aws:dynamodb',
      awsRegion: 'us-east-1',
      eventSourceARN: 'arn:aws:dynamodb:us-east-1:000000000000:table/events/stream/sim',
      dynamodb: {
        ApproximateCreationDateTime: Math.floor(change.atMs / 1000),
        Keys: change.keys as never,
        ...(change.newImage === undefined ? {} : { NewImage: change.newImage as never }),
        StreamViewType: 'NEW_IMAGE',
        SizeBytes: JSON.stringify(change.newImage ?? change.keys).length,
      },
    };
    const entry: ShardRecord = { readableAtMs, writtenAtMs: change.atMs, record };
    // Kept in readable order; a new record is never readable before the present, so a reader's
    // place in the shard never has a record slip in behind it.
    let index = shard.records.length;
    while (index > 0 && (shard.records[index - 1] as ShardRecord).readableAtMs > readableAtMs) index -= 1;
    shard.records.splice(index, 0, entry);
  }

  /** Records of the shard from `from` (an index) that are readable now, up to `limit`, with sequence numbers set. */
  readable(shard: StreamShard, from: number, limit: number): ShardRecord[] {
    const now = this.options.time.now();
    const out: ShardRecord[] = [];
    for (let index = from; index < shard.records.length && out.length < limit; index += 1) {
      const entry = shard.records[index] as ShardRecord;
      if (entry.readableAtMs > now) break;
      if (entry.sequence === undefined) {
        entry.sequence = this.sequence++;
        (entry.record.dynamodb as { SequenceNumber?: string }).SequenceNumber = String(entry.sequence).padStart(21, '0');
      }
      out.push(entry);
    }
    return out;
  }
}

function hash(text: string): number {
  let value = 0x811c9dc5;
  for (let index = 0; index < text.length; index += 1) {
    value ^= text.charCodeAt(index);
    value = Math.imul(value, 0x01000193) >>> 0;
  }
  return value;
}
