/**
 * The soak's verdict on one account, from its ledger, its change log (read afresh from the start
 * position), its receivers and its delivery records:
 *
 * - every acknowledged create/update/delete/restore/merge/erase is in the log, by record id and
 *   event name, in order per record (the events whose actor is the API key; cascades, imports and
 *   inbound mail are checked separately), and the key raised nothing else;
 * - no event names a record no write of the run touched, nor a record of another account;
 * - the cursor follower saw each event once, and what a fresh read shows, in the same order;
 * - the healthy endpoint received every logged event exactly once (one delivery id per event id),
 *   and nothing else; the slow and failing endpoints have one delivery record per event they subscribe to;
 * - imports, exports, erasures completed; each import's and mail's events are those it caused;
 * - a sample of live contacts is found by search on their last name, and deleted ones are not.
 */
import type { Account } from './account.js';
import { SLOW_EVENTS } from './account.js';
import { describeFailure } from './api.js';
import type { Expected, LogEvent, Problem } from './ledger.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const time = (ms: number) => new Date(ms).toISOString().slice(11, 23);
const fmtExpected = (xs: Expected[]) => xs.map((x) => `${x.event.split('.')[1]} (${x.op} acked ${time(x.ackAt)})`).join(', ') || 'nothing';
const fmtLogged = (xs: LogEvent[]) => xs.map((x) => `${x.event.split('.')[1]} ${x.id} @${x.timestamp.slice(11, 23)}`).join(', ') || 'nothing';

export interface Match {
  pairs: Array<[Expected, LogEvent]>;
  /** Expected events not (yet) in the log. */
  pending: number;
  mismatches: string[];
  skipped: number;
}

/** Pairs each expected event with the log's API-key events of its record, group by group in order. */
export function matchExpected(acc: Account, events: readonly LogEvent[]): Match {
  const ledger = acc.ledger;
  const byRecord = new Map<string, LogEvent[]>();
  for (const e of events) {
    if (e.actor.type !== 'api_key' || !ledger.expected.has(e.record_id)) continue;
    const list = byRecord.get(e.record_id) ?? [];
    list.push(e);
    byRecord.set(e.record_id, list);
  }
  const out: Match = { pairs: [], pending: 0, mismatches: [], skipped: 0 };
  for (const [id, exp] of ledger.expected) {
    if (ledger.uncertain.has(id) || ledger.erased.has(id)) {
      out.skipped++;
      continue;
    }
    const got = byRecord.get(id) ?? [];
    let j = 0;
    let matched = 0;
    let inOrder = true;
    for (let i = 0; i < exp.length && inOrder; ) {
      let k = i;
      while (k < exp.length && exp[k]!.group === exp[i]!.group) k++;
      const pool = got.slice(j, j + (k - i));
      const paired: Array<[Expected, LogEvent]> = [];
      for (const want of exp.slice(i, k)) {
        const at = pool.findIndex((e) => e.event === want.event);
        if (at < 0) break;
        paired.push([want, pool.splice(at, 1)[0]!]);
      }
      if (paired.length < k - i) inOrder = false;
      else {
        out.pairs.push(...paired);
        matched += paired.length;
        j += k - i;
        i = k;
      }
    }
    out.pending += exp.length - matched;
    if (!inOrder || j !== got.length) {
      const type = exp[0]!.event.split('.')[0];
      out.mismatches.push(`${type} ${id}: expected ${fmtExpected(exp)}; the log's events by the API key: ${fmtLogged(got)}`);
    }
  }
  return out;
}

/** Nearest-rank percentiles. */
export function percentiles(values: number[]): { n: number; p50: number; p95: number; p99: number; max: number } | undefined {
  if (!values.length) return undefined;
  const s = [...values].sort((a, b) => a - b);
  const at = (p: number) => s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
  return { n: s.length, p50: at(50), p95: at(95), p99: at(99), max: s[s.length - 1]! };
}

export interface DeliverySummary {
  records: number;
  statuses: Record<string, number>;
}

export interface AccountReport {
  label: string;
  logEvents: number;
  matched: number;
  skipped: number;
  healthyReceived: number;
  healthyRequests: number;
  /** Event ids the healthy receiver got more than once under the same delivery id (retries: allowed, counted). */
  healthyRetries: number;
  visibility: number[];
  webhook: number[];
  search: { live: number; gone: number };
  deliveries: Record<'slow' | 'failing', DeliverySummary>;
  problems: Problem[];
}

/** Everything a page of webhooks-deliveries holds for an endpoint: event id → records. */
async function deliveriesOf(acc: Account, endpointId: string): Promise<{ byEvent: Map<string, number>; statuses: Record<string, number>; records: number } | string> {
  const byEvent = new Map<string, number>();
  const statuses: Record<string, number> = {};
  let records = 0;
  let cursor: string | undefined;
  do {
    const a = await acc.api.call<{ deliveries: Array<{ event_id: string; status: string }>; next_cursor: string }>('webhooks-deliveries', { endpoint_id: endpointId, limit: 100, ...(cursor ? { cursor } : {}) }, { read: true });
    if (!a.ok) return describeFailure('webhooks-deliveries', a);
    for (const d of a.result.deliveries) {
      byEvent.set(d.event_id, (byEvent.get(d.event_id) ?? 0) + 1);
      statuses[d.status] = (statuses[d.status] ?? 0) + 1;
      records++;
    }
    cursor = a.result.next_cursor || undefined;
  } while (cursor);
  return { byEvent, statuses, records };
}

const listed = (ids: string[], limit = 10) => `${ids.slice(0, limit).join(', ')}${ids.length > limit ? `, … (${ids.length} in all)` : ''}`;

export async function checkAccount(acc: Account, accounts: readonly Account[], searchSeconds: number): Promise<AccountReport> {
  const ledger = acc.ledger;
  const problems: Problem[] = [...ledger.problems];
  const fail = (kind: Problem['kind'], message: string) => problems.push({ kind, message });

  // 1. The log: a fresh read from the start position, and what the cursor follower saw.
  const log = await acc.follower.readAll();
  const followed = acc.follower.events;
  if (acc.follower.duplicates.length) fail('log', `the cursor handed out ${acc.follower.duplicates.length} event(s) twice: ${listed(acc.follower.duplicates)}`);
  const freshIds = new Set<string>();
  for (const e of log) {
    if (freshIds.has(e.id)) fail('log', `event ${e.id} (${e.event} ${e.record_id}) appears twice in a fresh read of the log`);
    freshIds.add(e.id);
  }
  if (followed.length > log.length) fail('log', `the follower saw ${followed.length} events, a fresh read shows ${log.length}`);
  for (let i = 0; i < Math.min(followed.length, log.length); i++) {
    if (followed[i]!.id !== log[i]!.id) {
      fail('log', `position ${i} of the log: the follower saw ${followed[i]!.id} (${followed[i]!.event}), a fresh read shows ${log[i]!.id} (${log[i]!.event})`);
      break;
    }
  }

  // 2. Nothing for records the run did not touch, nothing of another account.
  const strangers: string[] = [];
  for (const e of log) {
    if (ledger.touched.has(e.record_id)) continue;
    const owner = accounts.find((o) => o !== acc && o.ledger.touched.has(e.record_id));
    if (owner) fail('events', `event ${e.id} ${e.event} of record ${e.record_id}, a record of account ${owner.label}, is in the log of ${acc.label}`);
    else strangers.push(`${e.event} ${e.record_id} (event ${e.id}, actor ${e.actor.type}${e.actor.id ? ` ${e.actor.id}` : ''})`);
  }
  if (strangers.length) fail('events', `${strangers.length} event(s) for records no write of this run touched: ${listed(strangers, 5)}`);
  if (acc.o.keyId) {
    const foreign = log.filter((e) => e.actor.type === 'api_key' && e.actor.id !== acc.o.keyId);
    if (foreign.length) fail('events', `${foreign.length} event(s) by another API key than the account's own (${acc.o.keyId}): ${listed(foreign.map((e) => `${e.event} ${e.record_id} by ${e.actor.id}`), 5)}`);
  }

  // 3. Every acknowledged write, in order per record, and nothing else by the key.
  const match = matchExpected(acc, log);
  for (const m of match.mismatches) fail('events', m);

  // 4. Erasures: one contact.erased each.
  for (const job of ledger.erasures) {
    const erased = log.filter((e) => e.record_id === job.contactId && e.event === 'contact.erased');
    if (job.status === 'completed' && erased.length !== 1) fail('events', `erasure ${job.id}: ${erased.length} contact.erased events for contact ${job.contactId} (expected 1)`);
  }

  // 5. Imports and inbound mail: the events they caused, exactly.
  const importIds = new Set(ledger.imports.map((j) => j.id));
  const mailIds = new Set(ledger.inbound.map((m) => m.emailId));
  for (const e of log) {
    if (e.actor.type === 'import' && !importIds.has(String(e.actor.id))) fail('events', `event ${e.id} ${e.event} ${e.record_id} by import ${e.actor.id}, not one of this run's`);
    if (e.actor.type === 'inbound_email' && !mailIds.has(String(e.actor.id))) fail('events', `event ${e.id} ${e.event} ${e.record_id} by inbound email ${e.actor.id}, not one of this run's`);
  }
  for (const job of ledger.imports.filter((j) => j.status === 'completed')) {
    const got = log.filter((e) => e.actor.type === 'import' && e.actor.id === job.id).map((e) => `${e.event} ${e.record_id}`).sort();
    const want = [...job.createdIds.map((id) => `contact.created ${id}`), `contact.updated ${job.updatedContactId}`].sort();
    if (got.join('|') !== want.join('|')) fail('events', `import ${job.id}: expected ${want.join(', ')}; the log has ${got.join(', ') || 'nothing'}`);
  }
  for (const mail of ledger.inbound.filter((m) => m.activityId)) {
    const got = log.filter((e) => e.actor.type === 'inbound_email' && e.actor.id === mail.emailId).map((e) => `${e.event} ${e.record_id}`);
    const want = [`activity.created ${mail.activityId}`];
    if (got.join('|') !== want.join('|')) fail('events', `inbound email ${mail.emailId}: expected ${want[0]}; the log has ${got.join(', ') || 'nothing'}`);
  }

  // 6. Webhooks: the healthy endpoint got every logged event once; the others have delivery records.
  const healthy = acc.hooks.healthy;
  const missing = log.filter((e) => !healthy.receipts.has(e.id));
  if (missing.length) fail('webhooks', `healthy endpoint: ${missing.length} logged event(s) never delivered: ${listed(missing.map((e) => `${e.id} ${e.event} ${e.record_id}`), 5)}`);
  const extra = [...healthy.receipts.entries()].filter(([id]) => !freshIds.has(id));
  if (extra.length) fail('webhooks', `healthy endpoint: ${extra.length} delivered event(s) not in the log: ${listed(extra.map(([id, r]) => `${id} ${r.event} ${r.recordId}`), 5)}`);
  const twice = [...healthy.receipts.entries()].filter(([, r]) => r.deliveryIds.size > 1);
  if (twice.length) fail('webhooks', `healthy endpoint: ${twice.length} event(s) delivered under several delivery ids: ${listed(twice.map(([id, r]) => `${id} ${r.event} ×${r.deliveryIds.size}`), 5)}`);
  if (healthy.malformed) fail('webhooks', `healthy endpoint: ${healthy.malformed} request(s) without a webhook-id or an event id`);
  const deliveries = {} as AccountReport['deliveries'];
  const subscribed = log.filter((e) => (SLOW_EVENTS as readonly string[]).includes(e.event));
  for (const kind of ['slow', 'failing'] as const) {
    // Delivery records are written just after the log's append: ask again a few times for stragglers.
    let summary: DeliverySummary = { records: 0, statuses: {} };
    let lacking: LogEvent[] = [];
    let error = '';
    for (let attempt = 0; attempt < 10; attempt++) {
      const got = await deliveriesOf(acc, acc.endpointIds[kind]);
      if (typeof got === 'string') {
        error = got;
        break;
      }
      summary = { records: got.records, statuses: got.statuses };
      lacking = subscribed.filter((e) => !got.byEvent.has(e.id));
      const foreign = [...got.byEvent.keys()].filter((id) => !subscribed.some((e) => e.id === id));
      const doubled = [...got.byEvent.entries()].filter(([, n]) => n > 1);
      if (lacking.length === 0 || attempt === 9) {
        if (foreign.length) fail('webhooks', `${kind} endpoint: ${foreign.length} delivery record(s) for events not in the log or not subscribed: ${listed(foreign, 5)}`);
        if (doubled.length) fail('webhooks', `${kind} endpoint: ${doubled.length} event(s) with several delivery records: ${listed(doubled.map(([id, n]) => `${id} ×${n}`), 5)}`);
        break;
      }
      await sleep(2_000);
    }
    if (error) fail('webhooks', `${kind} endpoint: ${error}`);
    if (lacking.length) fail('webhooks', `${kind} endpoint: ${lacking.length} subscribed event(s) without a delivery record: ${listed(lacking.map((e) => `${e.id} ${e.event} ${e.record_id}`), 5)}`);
    deliveries[kind] = summary;
  }

  // 7. Search: live contacts found by their last name, deleted ones not.
  const search = await checkSearch(acc, searchSeconds, fail);

  // 8. Lags of the matched writes.
  const visibility: number[] = [];
  const webhook: number[] = [];
  for (const [want, got] of match.pairs) {
    const seen = acc.follower.firstSeen.get(got.id);
    if (seen !== undefined) visibility.push(seen - want.ackAt);
    const receipt = healthy.receipts.get(got.id);
    if (receipt) webhook.push(receipt.firstAt - want.ackAt);
  }
  return {
    label: acc.label,
    logEvents: log.length,
    matched: match.pairs.length,
    skipped: match.skipped,
    healthyReceived: healthy.receipts.size,
    healthyRequests: healthy.requests,
    healthyRetries: [...healthy.receipts.values()].filter((r) => r.requests > r.deliveryIds.size).length,
    visibility,
    webhook,
    search,
    deliveries,
    problems,
  };
}

async function checkSearch(acc: Account, seconds: number, fail: (kind: Problem['kind'], message: string) => void): Promise<{ live: number; gone: number }> {
  const shuffle = <T>(xs: T[]) => xs.map((x) => [Math.random(), x] as const).sort((a, b) => a[0] - b[0]).map(([, x]) => x);
  const contacts = [...acc.contacts.values()].filter((c) => !acc.ledger.uncertain.has(c.id));
  const live = shuffle(contacts.filter((c) => c.state === 'live')).slice(0, 50);
  const gone = shuffle(contacts.filter((c) => c.state !== 'live')).slice(0, 20);
  let pending = [...live.map((c) => ({ c, want: true })), ...gone.map((c) => ({ c, want: false }))];
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    const next: typeof pending = [];
    for (const item of pending) {
      const a = await acc.api.call<{ items: Array<{ id: string }> }>('contacts-list', { search: item.c.lastName, limit: 10 }, { read: true });
      if (!a.ok) {
        fail('search', describeFailure('contacts-list', a));
        next.push(item);
        continue;
      }
      if (a.result.items.some((x) => x.id === item.c.id) !== item.want) next.push(item);
    }
    pending = next;
    if (!pending.length || Date.now() > deadline) break;
    await sleep(2_000);
  }
  for (const { c, want } of pending) fail('search', `${want ? 'live' : c.state} contact ${c.id} (last name ${c.lastName}) ${want ? 'not found' : 'still found'} by contacts-list { search: "${c.lastName}" } ${seconds} s after the wait`);
  return { live: live.length, gone: gone.length };
}
