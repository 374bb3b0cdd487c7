/**
 * The stream's routing to the changes queue (shared/stream/route.ts) and the worker's fair slots
 * (shared/stream/fair-slots.ts): every record change is routed once, in its account's order, in
 * messages within SQS's limits; a freed slot goes to the waiting accounts in turn.
 */
import { marshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RECORD_SK, TABLE_DEFINITION } from '../../shared/db/table.js';
import { FairSlots } from '../../shared/stream/fair-slots.js';
import { type ChangesMessage, MAX_MESSAGE_BYTES, MAX_MESSAGE_RECORDS, planMessages } from '../../shared/stream/route.js';

/** A stream record of a contact of `account` (or an item that is not a record: `other`). */
const streamRecord = (seq: number, account: string, other: boolean, nameLength: number): DynamoDBRecord => ({
  eventID: `e${seq}`,
  eventName: 'INSERT',
  dynamodb: {
    SequenceNumber: String(seq),
    Keys: marshall({ pk: `A#${account}#c#${seq}`, sk: other ? 'x' : RECORD_SK }) as never,
    NewImage: marshall({ pk: `A#${account}#c#${seq}`, sk: other ? 'x' : RECORD_SK, [TABLE_DEFINITION.entityTypeAttribute]: 'contact', account_id: account, id: `c${seq}`, first_name: 'x'.repeat(nameLength) }) as never,
  },
});

const batches = fc.array(fc.record({ account: fc.constantFrom('a', 'b', 'c'), other: fc.boolean(), nameLength: fc.integer({ min: 0, max: 5000 }) }), { maxLength: 300 });

describe('planMessages', () => {
  it('routes every record change once, by account in stream order, within the message limits', () => {
    fc.assert(
      fc.property(batches, (specs) => {
        const records = specs.map((s, i) => streamRecord(i, s.account, s.other, s.nameLength));
        const messages = planMessages(records);
        const routed = messages.flatMap((m) => (JSON.parse(m.body) as ChangesMessage).records.map((r) => ({ group: m.group, seq: Number(r.dynamodb?.SequenceNumber) })));
        const expected = specs.flatMap((s, i) => (s.other ? [] : [{ group: s.account, seq: i }]));
        expect([...routed].sort((x, y) => x.seq - y.seq)).toEqual(expected);
        for (const account of ['a', 'b', 'c']) {
          const seqs = routed.filter((r) => r.group === account).map((r) => r.seq);
          expect(seqs).toEqual([...seqs].sort((x, y) => x - y));
        }
        for (const m of messages) {
          const body = JSON.parse(m.body) as ChangesMessage;
          expect(body.account_id).toBe(m.group);
          expect(body.records.length).toBeLessThanOrEqual(MAX_MESSAGE_RECORDS);
          // A message is over the byte budget only when it holds a single record.
          if (body.records.length > 1) expect(m.body.length).toBeLessThanOrEqual(MAX_MESSAGE_BYTES + 100);
          expect(m.first).toBe(Number(body.records[0]!.dynamodb?.SequenceNumber));
        }
        // The same batch plans the same messages (the deduplication ids of a retried batch match).
        expect(planMessages(records).map((m) => m.dedup)).toEqual(messages.map((m) => m.dedup));
      }),
      { numRuns: 60 },
    );
  });
});

describe('FairSlots', () => {
  it('hands a freed slot to the waiting groups in turn, never more than its capacity at once', async () => {
    fc.assert(
      await fc.asyncProperty(fc.integer({ min: 1, max: 4 }), fc.array(fc.constantFrom('A', 'B', 'C'), { minLength: 1, maxLength: 40 }), async (capacity, asks) => {
        const slots = new FairSlots(capacity);
        let busy = 0;
        let most = 0;
        const order: string[] = [];
        // A bulk account fills every slot first; then the asks arrive while they are busy.
        const held = await Promise.all(Array.from({ length: capacity }, () => slots.acquire('A')));
        const done = asks.map((group) =>
          slots.acquire(group).then(async (release) => {
            order.push(group);
            most = Math.max(most, ++busy);
            await new Promise((r) => setTimeout(r, 0));
            busy--;
            release();
          }),
        );
        held.forEach((release) => release());
        await Promise.all(done);
        expect(most).toBeLessThanOrEqual(capacity);
        expect(order.sort()).toEqual([...asks].sort());
      }),
      { numRuns: 40 },
    );
  });

  it('serves a quiet group after at most one turn of a busy one', async () => {
    const slots = new FairSlots(1);
    const order: string[] = [];
    const first = await slots.acquire('A');
    const done = [...['A', 'A', 'A', 'A'], 'B', 'C'].map((group) => slots.acquire(group).then((release) => (order.push(group), release())));
    first();
    await Promise.all(done);
    // Without turns B and C would wait for A's four.
    expect(order).toEqual(['A', 'B', 'C', 'A', 'A', 'A']);
  });
});
