/**
 * Change-log read costs (contract §12): RCU and items read per `events-list` page over logs of
 * 10,000 and 100,000 events, unfiltered, by a rare type, by one record's history, from `since`.
 * The log is seeded with the items the stream worker's append writes (planAppend), in bulk.
 */
import { randomUUID } from 'node:crypto';
import { invokeOperation } from '../local/invoke.js';
import { measureCapacity } from '../shared/db/capacity.js';
import { eventRetentionSeconds, type LogAppend, planAppend } from '../shared/db/events.js';
import { batchWriteItems, type WriteRequest } from '../shared/db/items.js';
import type { AuthContext } from '../shared/http/operation.js';

const round = (n: number) => Math.round(n * 100) / 100;
const EVENTS = ['contact.created', 'contact.updated', 'company.updated', 'activity.created'] as const;
const RARE = 'project.deleted';
const HISTORY = 50;

/** A contact's event as the stream worker writes it (about 1.1 KB of JSON, like the bench's full contact). */
function eventBody(id: string, event: string, recordId: string, n: number): string {
  const data = {
    id: recordId, account_id: randomUUID(), created_by: randomUUID(), first_name: `First${n}`, last_name: `Last${n}`, email: `person${n}@example.com`,
    phone: '+1 (555) 123-4567', job_title: 'Engineer', company_id: randomUUID(), company_name: 'Company 12 GmbH', source_id: null, source_name: '',
    address: '12 Example Street', city: 'Springfield', country: 'US', website: 'https://example.com/people/someone', social_url: '',
    tags: ['tag-1', 'tag-2', 'tag-3'], custom_fields: {}, notes: 'Met at the conference; follow up in spring about the enterprise plan.',
    created_at: '2026-11-22T01:16:30.123Z', updated_at: '2026-11-22T01:16:30.123Z',
  };
  return JSON.stringify({ id, event, timestamp: new Date().toISOString(), record_id: recordId, data, ...(event.endsWith('.updated') ? { previous_attributes: { city: 'Paris' } } : {}), actor: { type: 'api_key', id: randomUUID() } });
}

/** Appends `count` events after `head` in bulk (the same items as the stream worker's transactions). */
async function seed(accountId: string, head: number, count: number, history: string): Promise<number> {
  const retention = eventRetentionSeconds();
  let at = '';
  for (let done = 0; done < count; ) {
    const n = Math.min(1000, count - done);
    const events: LogAppend[] = Array.from({ length: n }, (_, i) => {
      const k = head + done + i;
      const id = randomUUID();
      const event = k % 1000 === 500 ? RARE : EVENTS[k % EVENTS.length]!;
      // One record's history: HISTORY events spread evenly over the first 10,000.
      const recordId = k % 200 === 7 && k < HISTORY * 200 ? history : randomUUID();
      return { id, event, recordId, body: eventBody(id, event, recordId, k) };
    });
    const plan = planAppend(accountId, { seq: head + done, at }, events, new Date(), retention);
    const puts = plan.slice(1).map((t) => ({ PutRequest: { Item: t.Put!.Item } }) as WriteRequest);
    const headItem = plan[0]!.Update!;
    at = String(headItem.ExpressionAttributeValues![':at']);
    puts.push({ PutRequest: { Item: { ...headItem.Key, seq: head + done + n, at } } } as WriteRequest);
    // Several BatchWriteItem calls at once (the order of the puts does not matter: a page reads
    // only after the whole seed, and the head is written with its chunk).
    const chunks = Array.from({ length: Math.ceil(puts.length / 25) }, (_, c) => puts.slice(c * 25, c * 25 + 25));
    let next = 0;
    await Promise.all(Array.from({ length: 8 }, async () => {
      while (next < chunks.length) await batchWriteItems(chunks[next++]!);
    }));
    done += n;
  }
  return head + count;
}

export async function benchEvents(sizes: number[], log: (...a: unknown[]) => void): Promise<Record<string, unknown>[]> {
  const auth: AuthContext = { accountId: randomUUID(), userId: randomUUID() };
  const history = randomUUID();
  const rows: Record<string, unknown>[] = [];
  let head = 0;
  for (const size of sizes) {
    const t = performance.now();
    head = await seed(auth.accountId, head, size - head, history);
    log(`change log seeded to ${size} events in ${Math.round(performance.now() - t)} ms`);
    const page = async (body: Record<string, unknown>) => {
      const r = await invokeOperation<{ next_cursor: string; items: unknown[] }>('events-list', body, auth);
      if (!r.body.ok) throw new Error(`events-list ${JSON.stringify(body)}: ${JSON.stringify(r.body.error)}`);
      return r.body.result!;
    };
    // A cursor in the middle of the log (after half of it), for each filter.
    const middle = async (body: Record<string, unknown>) => {
      let cursor = (await page({ ...body, limit: 100 })).next_cursor;
      for (let i = 0; i < Math.floor(size / 200); i++) cursor = (await page({ ...body, limit: 100, cursor })).next_cursor;
      return cursor;
    };
    const cases: Array<{ name: string; body: () => Promise<Record<string, unknown>> }> = [
      { name: 'events-list first page', body: async () => ({}) },
      { name: 'events-list page (cursor mid-log)', body: async () => ({ cursor: await middle({}) }) },
      { name: 'events-list since (1 h ago)', body: async () => ({ since: new Date(Date.now() - 3_600_000).toISOString() }) },
      { name: `events-list types rare (${RARE}, 1 in 1,000)`, body: async () => ({ types: [RARE] }) },
      { name: 'events-list types two common', body: async () => ({ types: ['contact.created', 'company.updated'] }) },
      { name: `events-list record_id (history of ${HISTORY})`, body: async () => ({ record_id: history }) },
      { name: 'events-list record_id + types', body: async () => ({ record_id: history, types: ['contact.updated'] }) },
    ];
    for (const c of cases) {
      const body = await c.body();
      const { result, usage } = await measureCapacity(() => invokeOperation<{ items: unknown[] }>('events-list', body, auth));
      if (!result.body.ok) throw new Error(`${c.name}: ${JSON.stringify(result.body.error)}`);
      rows.push({ name: c.name, size, rcu: round(usage.rcu), items_read: usage.itemsRead, calls: usage.calls, returned: result.body.result!.items.length });
      log(`${size} ${c.name} rcu=${round(usage.rcu)} read=${usage.itemsRead} returned=${result.body.result!.items.length}`);
    }
  }
  return rows;
}
