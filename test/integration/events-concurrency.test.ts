/**
 * Completeness of the change log (contract §12) under concurrent writers: readers follow
 * next_cursor while the log grows and must see every event exactly once, in each writer's order.
 * (1) Many appenders at once — what parallel stream shards do deployed — with retried batches;
 * (2) many API writers through the local stream worker.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendEvents, type LogAppend } from '../../shared/db/events.js';
import type { AuthContext } from '../../shared/domain/context.js';
import { newAccount, ok } from '../helpers/api.js';
import { type Pipeline, startPipeline } from '../helpers/webhook-harness.js';

interface Ev {
  id: string;
  event: string;
  record_id: string;
  data: Record<string, unknown>;
}
interface Page {
  items: Ev[];
  next_cursor: string;
  has_more: boolean;
}

/** A consumer following the cursor until `done()` holds and it has caught up. */
async function follow(auth: AuthContext, filters: Record<string, unknown>, done: () => boolean): Promise<Ev[]> {
  const seen: Ev[] = [];
  let cursor: string | undefined;
  for (;;) {
    const finished = done(); // read before the page: everything written is then visible to it
    const page = await ok<Page>('events-list', { ...filters, limit: 7, ...(cursor ? { cursor } : {}) }, auth);
    seen.push(...page.items);
    cursor = page.next_cursor;
    if (finished && !page.has_more) return seen;
    if (!page.has_more) await new Promise((r) => setImmediate(r));
  }
}

describe('change log completeness', { timeout: 300_000 }, () => {
  it('readers following the cursor see every event of 6 concurrent appenders exactly once, in order', async () => {
    const auth = newAccount();
    const WRITERS = 6;
    const PER_WRITER = 30;
    const records = Array.from({ length: WRITERS }, () => randomUUID());
    const eventOf = (w: number, i: number): LogAppend => {
      const id = `w${w}-${i}-${randomUUID()}`;
      const event = i % 3 === 0 ? 'company.updated' : 'contact.updated';
      const body = { id, event, timestamp: new Date().toISOString(), record_id: records[w]!, data: { writer: w, n: i }, actor: { type: 'system', id: null } };
      return { id, event, recordId: records[w]!, body: JSON.stringify(body) };
    };
    const planned = Array.from({ length: WRITERS }, (_, w) => Array.from({ length: PER_WRITER }, (_, i) => eventOf(w, i)));
    let writing = WRITERS;
    const writers = planned.map(async (events) => {
      try {
        for (let i = 0; i < events.length; ) {
          const n = 1 + Math.floor(Math.random() * 28); // up to 28: some appends span two transactions
          const chunk = events.slice(i, i + n);
          await appendEvents(auth.accountId, chunk);
          if (Math.random() < 0.3) await appendEvents(auth.accountId, chunk); // a retried stream batch
          i += n;
        }
      } finally {
        writing--;
      }
    });
    const done = () => writing === 0;
    const [all, companies, oneRecord] = await Promise.all([
      follow(auth, {}, done),
      follow(auth, { types: ['company.updated'] }, done),
      follow(auth, { record_id: records[3] }, done),
      ...writers,
    ]);

    const ids = (evs: Ev[]) => evs.map((e) => e.id);
    const expectedAll = planned.flat();
    expect(all).toHaveLength(expectedAll.length);
    expect(new Set(ids(all)).size).toBe(all.length);
    expect(new Set(ids(all))).toEqual(new Set(expectedAll.map((e) => e.id)));
    for (let w = 0; w < WRITERS; w++) {
      expect(ids(all.filter((e) => e.data.writer === w))).toEqual(planned[w]!.map((e) => e.id));
    }
    expect(ids(companies)).toEqual(ids(all.filter((e) => e.event === 'company.updated')));
    expect(ids(oneRecord)).toEqual(planned[3]!.map((e) => e.id));
  });

  describe('through the API and the stream worker', () => {
    let pipeline: Pipeline;
    beforeAll(async () => {
      pipeline = await startPipeline();
    });
    afterAll(async () => {
      await pipeline?.stop();
    });

    it('every change of 8 concurrent writers is one event, read once, each record\'s in commit order', async () => {
      const auth = newAccount();
      const WRITERS = 8;
      const UPDATES = 3;
      let writing = WRITERS;
      let settled = false;
      const writers = Array.from({ length: WRITERS }, async (_, w) => {
        try {
          const c = await ok<{ id: string }>('contacts-create', { first_name: `Writer ${w}` }, auth);
          for (let n = 1; n <= UPDATES; n++) await ok('contacts-update', { id: c.id, notes: String(n) }, auth);
          return c.id;
        } finally {
          if (--writing === 0) void pipeline.poller!.drain(240_000).then(() => (settled = true));
        }
      });
      const [seen, ...ids] = await Promise.all([follow(auth, {}, () => settled), ...writers]);
      expect(seen).toHaveLength(WRITERS * (1 + UPDATES));
      expect(new Set(seen.map((e) => e.id)).size).toBe(seen.length);
      for (const id of ids) {
        const history = seen.filter((e) => e.record_id === id);
        expect(history.map((e) => [e.event, e.data.notes])).toEqual([
          ['contact.created', ''],
          ...Array.from({ length: UPDATES }, (_, n) => ['contact.updated', String(n + 1)]),
        ]);
      }
    });
  });
});
