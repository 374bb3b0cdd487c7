/**
 * The stream's routing to the changes queue (shared/stream/route.ts) and the worker's fair slots
 * (shared/fair-slots.ts): every record change is routed once, in its account's order, in
 * messages within SQS's limits; a freed slot goes to the waiting accounts in turn.
 */
import { marshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';
import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { RECORD_SK, TABLE_DEFINITION } from '../../shared/db/table.js';
import { FairSlots, SlotTimeout } from '../../shared/fair-slots.js';
import { accountOfCall } from '../../local/fair-gate.js';
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
  it('hands a freed slot to the waiting groups in turn, never more than its capacity at once nor more than a group\'s share', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 6 }), fc.integer({ min: 1, max: 6 }), fc.array(fc.constantFrom('A', 'B', 'C'), { minLength: 1, maxLength: 40 }), async (capacity, share, asks) => {
        const perGroup = Math.min(share, capacity);
        const slots = new FairSlots(capacity, perGroup);
        let busy = 0;
        let most = 0;
        /** Grants to a group already at its share while another group held or waited for a slot. */
        let overShare = 0;
        const order: string[] = [];
        // A bulk account alone takes every slot first; then the asks arrive while it is busy.
        const first = await Promise.all(Array.from({ length: capacity }, () => slots.acquire('A')));
        expect(slots.state.busy).toBe(capacity);
        const done = asks.map((group) =>
          slots.acquire(group).then(async (release) => {
            order.push(group);
            most = Math.max(most, ++busy);
            const state = slots.state;
            const othersActive = Object.keys(state.held).some((g) => g !== group) || state.waitingGroups.some((g) => g !== group);
            if (state.held[group]! - 1 >= perGroup && othersActive) overShare++;
            await new Promise((r) => setTimeout(r, 0));
            busy--;
            release();
          }),
        );
        first.forEach((release) => release());
        await Promise.all(done);
        expect(most).toBeLessThanOrEqual(capacity);
        expect(overShare).toBe(0);
        expect(order.sort()).toEqual([...asks].sort());
        expect(slots.state).toEqual({ busy: 0, held: {}, waitingGroups: [] });
      }),
      { numRuns: 60 },
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

  it('lets a group alone use every slot, and keeps it to its share while another group is served', async () => {
    const slots = new FairSlots(8, 2);
    const granted: string[] = [];
    const ask = (group: string) => slots.acquire(group).then((release) => (granted.push(group), release));
    // A alone asks for twelve slots: it gets all eight, four wait.
    const a = Array.from({ length: 12 }, () => ask('A'));
    await new Promise((r) => setTimeout(r, 0));
    expect(slots.state.held).toEqual({ A: 8 });
    // B asks: it gets the next freed slot, before A's waiting ones.
    const b = ask('B');
    (await a[0]!)();
    const releaseB = await b;
    expect(slots.state.held).toEqual({ A: 7, B: 1 });
    // While B holds its slot, A's freed slots are not given back to A until A is down to its share.
    for (let n = 1; n <= 5; n++) (await a[n]!)();
    await new Promise((r) => setTimeout(r, 0));
    expect(slots.state.held).toEqual({ A: 2, B: 1 });
    // B done: A alone again takes every slot it asks for.
    releaseB();
    await new Promise((r) => setTimeout(r, 0));
    expect(slots.state.held).toEqual({ A: 6 });
    for (let n = 6; n < 12; n++) (await a[n]!)();
    expect(granted.filter((g) => g === 'A')).toHaveLength(12);
    expect(slots.state.busy).toBe(0);
  });

  it('keeps a busy group to its share for a while after another group was served', async () => {
    let now = 0;
    const slots = new FairSlots(8, 2, 2_000, () => now);
    (await slots.acquire('B'))();
    // B was served a moment ago: A gets its share, the rest waits.
    now = 1_000;
    const a = Array.from({ length: 6 }, () => slots.acquire('A'));
    await new Promise((r) => setTimeout(r, 0));
    expect(slots.state.held).toEqual({ A: 2 });
    // Once B has been quiet for longer than that, A's freed slots let its waiting ones all in.
    now = 3_500;
    (await a[0]!)();
    await new Promise((r) => setTimeout(r, 0));
    expect(slots.state.held).toEqual({ A: 5 });
    for (let n = 1; n < 6; n++) (await a[n]!)();
    expect(slots.state.busy).toBe(0);
  });
});

describe('FairSlots never waits without a bound', () => {
  it('gives a held-back group its slots once the other group\'s recent activity lapses, though nobody acquires or releases meanwhile', async () => {
    // The changes worker's stall: account A holds its share while another account was served a
    // moment ago, and A's holders wait on what A's waiting items do (nothing is released until
    // a waiter runs). The "others active" rule is time-based: without a look once it lapses,
    // the free slots stayed idle and A waited for good.
    vi.useFakeTimers();
    try {
      const slots = new FairSlots(8, 4, 10_000);
      (await slots.acquire('B'))();
      let waiterRan!: () => void;
      const ran = new Promise<void>((r) => (waiterRan = r));
      const holders = await Promise.all(Array.from({ length: 4 }, () => slots.acquire('A')));
      let granted = false;
      const fifth = slots.acquire('A').then((release) => {
        granted = true;
        waiterRan();
        return release;
      });
      await vi.advanceTimersByTimeAsync(5_000);
      expect(slots.state).toMatchObject({ busy: 4, held: { A: 4 }, waitingGroups: ['A'] });
      expect(granted).toBe(false);
      // B has now been quiet for longer than 10 s: A may use the free slots.
      await vi.advanceTimersByTimeAsync(5_100);
      expect(granted).toBe(true);
      await ran;
      (await fifth)();
      holders.forEach((release) => release());
      expect(slots.state).toEqual({ busy: 0, held: {}, waitingGroups: [] });
    } finally {
      vi.useRealTimers();
    }
  });

  it('gives up a wait after its time limit with SlotTimeout, and the slot is not given to it later', async () => {
    vi.useFakeTimers();
    try {
      const slots = new FairSlots(1);
      const release = await slots.acquire('A');
      const waiting = slots.acquire('B', 2_000);
      const outcome = waiting.then(() => 'granted', (e: unknown) => e);
      await vi.advanceTimersByTimeAsync(2_001);
      expect(await outcome).toBeInstanceOf(SlotTimeout);
      expect(slots.state.waitingGroups).toEqual([]);
      release();
      expect(slots.state).toEqual({ busy: 0, held: {}, waitingGroups: [] });
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('accountOfCall (local mode\'s DynamoDB gate, local/fair-gate.ts, groups calls by it)', () => {
  const a = '0b5c9d0e-0000-4000-8000-000000000001';
  it('finds the account of every kind of call, marshalled as the client sends it', () => {
    const calls: unknown[] = [
      { TableName: 't', Key: marshall({ pk: `A#${a}#contact#1`, sk: 'R' }) },
      { TableName: 't', KeyConditionExpression: 'pk = :p', ExpressionAttributeValues: marshall({ ':p': `A#${a}#contact#x#w#ada` }) },
      { RequestItems: { t: [{ PutRequest: { Item: marshall({ pk: `A#${a}#ev`, sk: '1' }) } }] } },
      { TransactItems: [{ Update: { TableName: 't', Key: marshall({ pk: `A#${a}#evh`, sk: 'H' }), UpdateExpression: 'SET x = :x' } }] },
      { RequestItems: { t: { Keys: [marshall({ pk: `A#${a}`, sk: 'META' })] } } },
    ];
    for (const call of calls) expect(accountOfCall(call)).toBe(a);
  });
  it('groups calls without an account apart', () => {
    expect(accountOfCall({ TableName: 't', Key: marshall({ pk: 'TOKEN#abc', sk: 'TOKEN' }) })).toBeUndefined();
    expect(accountOfCall({ TableName: 't', Key: marshall({ pk: 'SYSTEM', sk: 'CURSOR_KEY' }) })).toBeUndefined();
  });
});
