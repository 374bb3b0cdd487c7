/**
 * The change log's items (contract §12; the design and its completeness argument:
 * docs/data-model.md, "The change log").
 *
 * - head `A#<acct>#evh / H`: `{ seq, at }`, the last position written and its time.
 * - entries: `A#<acct>#ev / <seq>` and the same entry under `A#<acct>#evt#<event> / <seq>` and
 *   `A#<acct>#evr#<record> / <seq>`, each `{ id, event, record_id, body, at, ttl }` (`body`: the
 *   event's JSON exactly as webhooks receive it).
 * - marker `A#<acct>#evid#<event id> / E`: `{ seq }`, so an event is appended once.
 * - second `A#<acct>#evs / <YYYY-MM-DDTHH:MM:SS>`: `{ seq }`, the first position appended in that second.
 *
 * One transaction moves the head from n to n+k and writes entries n+1..n+k with their copies and
 * markers: the log has no gaps, and every position at or below the head is committed.
 *
 * The log lives in the control table (`logTableName`): it is derived from the records' stream by
 * the changes worker and nothing reacts to it, so its six items an event are no stream records
 * that the stream's reader would pass. Who deleted a record (`deletionItem`) is written in the
 * record's own transaction and stays in the records' table.
 */
import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { optionalEnv } from '../config/env.js';
import { db, tableName } from './client.js';
import { controlTableName } from './control.js';
import { cancellationCodes, eq, exists, filter, merge, notExists, oneOf, partition, transact, type TransactItem, update } from './expr.js';
import { queryAll, writeUnlessRefused } from './items.js';
import { type EntityType, eventSk, keys, TABLE_DEFINITION } from './table.js';
import { backoff } from '../backoff.js';

/** One event to append: its id, name, record and body (the webhook body, byte for byte). */
export interface LogAppend {
  id: string;
  event: string;
  recordId: string;
  body: string;
}

/** A stored entry. */
export interface LogEntry {
  seq: number;
  id: string;
  event: string;
  record_id: string;
  body: string;
  /** When it was appended (never earlier than the entry before it). */
  at: string;
  /** Epoch seconds after which it is no longer retained (the table's TTL removes it). */
  ttl: number;
}

export interface LogHead {
  seq: number;
  at: string;
}

/** The table of the change log's items (see above). */
export const logTableName = controlTableName;

const DEFAULT_RETENTION_DAYS = 30;

/** `EVENT_RETENTION_DAYS` (default 30; fractions allowed, for tests) in seconds. */
export function eventRetentionSeconds(): number {
  const days = Number(optionalEnv('EVENT_RETENTION_DAYS') ?? DEFAULT_RETENTION_DAYS);
  return Math.max(1, Math.round((Number.isFinite(days) && days > 0 ? days : DEFAULT_RETENTION_DAYS) * 86_400));
}

/** The log's filters map to one partition each: the whole log, an event name's, or a record's. */
export type LogView = { kind: 'all' } | { kind: 'type'; event: string } | { kind: 'record'; recordId: string };

const partitionOf = (accountId: string, view: LogView) =>
  view.kind === 'all' ? keys.eventPartition(accountId) : view.kind === 'type' ? keys.eventTypePartition(accountId, view.event) : keys.eventRecordPartition(accountId, view.recordId);

/**
 * Reads of items an append is writing at that moment: DynamoDB Local (and, rarely, DynamoDB) may
 * answer a strongly consistent read with a transaction conflict; it is retried after a short wait.
 */
async function reading<T>(fn: () => Promise<T>): Promise<T> {
  // A budget of time, not of attempts: on a loaded machine six concurrent appenders can hold the
  // head for longer than a few quick retries (seen as a 500 in CI); the API's limit is 10 s.
  const deadline = Date.now() + READ_RETRY_BUDGET_MS;
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn();
    } catch (error) {
      if ((error as Error).name !== 'TransactionConflictException' || Date.now() >= deadline) throw error;
      await backoff(attempt, 10, 250);
    }
  }
}

/** How long a read keeps retrying a transaction conflict. */
const READ_RETRY_BUDGET_MS = 6_000;

export async function readHead(accountId: string): Promise<LogHead> {
  const out = await reading(() => db().send(new GetCommand({ TableName: logTableName(), Key: keys.eventHead(accountId), ConsistentRead: true })));
  return { seq: Number(out.Item?.seq ?? 0), at: String(out.Item?.at ?? '') };
}

/** At most this many events per transaction: 4 items each, plus the head and a second's marker (the limit is 100 items). */
export const EVENTS_PER_TRANSACTION = 24;
const MAX_ATTEMPTS = 200;

/** The transaction that moves the head from `head` and writes `events` at the positions after it (pure). */
export function planAppend(accountId: string, head: LogHead, events: LogAppend[], now: Date, retentionSeconds: number): TransactItem[] {
  const nowIso = now.toISOString();
  const at = head.at > nowIso ? head.at : nowIso;
  const ttl = Math.floor(Date.parse(at) / 1000) + retentionSeconds;
  const seqOf = (i: number) => head.seq + 1 + i;
  const T = logTableName();
  // The first append of a second marks where that second starts (appends are serialised by the head).
  const second = secondOf(at);
  const mark: TransactItem[] = secondOf(head.at) === second ? [] : [{ Put: { TableName: T, Item: { ...keys.eventSecond(accountId, second), seq: seqOf(0), [TABLE_DEFINITION.ttlAttribute]: ttl } } }];
  return [
    {
      Update: {
        TableName: T,
        Key: keys.eventHead(accountId),
        ...update({ set: { seq: head.seq + events.length, at } }, head.seq === 0 ? notExists('seq') : eq('seq', head.seq)),
      },
    },
    ...events.flatMap((e, i): TransactItem[] => {
      const attrs = { id: e.id, event: e.event, record_id: e.recordId, body: e.body, at, [TABLE_DEFINITION.ttlAttribute]: ttl };
      return [
        {
          Put: {
            TableName: T,
            Item: { ...keys.eventMarker(accountId, e.id), seq: seqOf(i), [TABLE_DEFINITION.ttlAttribute]: ttl },
            ...notExists(),
          },
        },
        { Put: { TableName: T, Item: { ...keys.eventEntry(keys.eventPartition(accountId), seqOf(i)), ...attrs } } },
        { Put: { TableName: T, Item: { ...keys.eventEntry(keys.eventTypePartition(accountId, e.event), seqOf(i)), ...attrs } } },
        { Put: { TableName: T, Item: { ...keys.eventEntry(keys.eventRecordPartition(accountId, e.recordId), seqOf(i)), ...attrs } } },
      ];
    }),
    ...mark,
  ];
}

/** The second of an ISO time (`YYYY-MM-DDTHH:MM:SS`): the key of the per-second markers. */
export const secondOf = (iso: string) => iso.slice(0, 19);

/** The first positions of the first `n` seconds with appends at or after `second`, oldest first. */
export async function secondsFrom(accountId: string, second: string, n: number): Promise<Array<{ second: string; seq: number }>> {
  const out = await reading(() => db().send(
    new QueryCommand({
      TableName: logTableName(),
      ...partition(keys.eventSecondPartition(accountId), ['>=', second]),
      ConsistentRead: true,
      Limit: n,
    }),
  ));
  return (out.Items ?? []).map((i) => ({ second: String(i.sk), seq: Number(i.seq) }));
}

/**
 * Appends events (in the given order) after the account's head. Concurrent appenders race on
 * the head's condition; the loser re-reads the head and tries again. An event whose marker
 * exists was appended by an earlier attempt and is left out. Returns how many were appended.
 */
export async function appendEvents(accountId: string, events: LogAppend[], opts: { now?: () => Date } = {}): Promise<number> {
  const seen = new Set<string>();
  let pending = events.filter((e) => !seen.has(e.id) && seen.add(e.id));
  const retention = eventRetentionSeconds();
  let appended = 0;
  for (let attempt = 0; pending.length > 0; ) {
    const chunk = pending.slice(0, EVENTS_PER_TRANSACTION);
    const head = await readHead(accountId);
    // A refused head or marker, or a conflict with another appender: not written, tried again.
    const refused = await transact(planAppend(accountId, head, chunk, opts.now?.() ?? new Date(), retention)).catch((error: unknown) => {
      const codes = cancellationCodes(error);
      if (codes ? codes.includes('TransactionConflict') : (error as Error).name === 'TransactionConflictException') return { at: [] as number[], error };
      throw error;
    });
    if (!refused) {
      pending = pending.slice(chunk.length);
      appended += chunk.length;
      attempt = 0;
      continue;
    }
    // Markers are at 1 + 4i: those that exist were logged before.
    const logged = new Set(chunk.filter((_, i) => refused.at.includes(1 + 4 * i)).map((e) => e.id));
    if (logged.size) {
      pending = pending.filter((e) => !logged.has(e.id));
      continue;
    }
    if (++attempt >= MAX_ATTEMPTS) throw refused.error;
    await backoff(attempt, 4, 200);
  }
  return appended;
}

const toEntry = (item: Record<string, unknown>): LogEntry => ({
  seq: Number(item.sk),
  id: String(item.id),
  event: String(item.event),
  record_id: String(item.record_id),
  body: String(item.body),
  at: String(item.at),
  ttl: Number(item[TABLE_DEFINITION.ttlAttribute]),
});

/**
 * Entries of a view at positions in (after, upto], oldest first, strongly consistent: at most
 * `limit` entries, reading at most `maxRead` items (`events` filters a record's history by name).
 * `scannedTo` is the last position read when the read stopped before `upto` (else undefined).
 */
export async function queryEntries(
  accountId: string,
  view: LogView,
  range: { after: number; upto: number },
  opts: { limit: number; maxRead?: number; events?: readonly string[] },
): Promise<{ entries: LogEntry[]; scannedTo?: number }> {
  const entries: LogEntry[] = [];
  if (range.upto <= range.after) return { entries };
  const byName = opts.events?.length ? filter(oneOf('event', opts.events)) : undefined;
  const params = merge(partition(partitionOf(accountId, view), ['between', eventSk(range.after + 1), eventSk(range.upto)]), byName);
  const maxRead = opts.maxRead ?? opts.limit;
  let read = 0;
  let startKey: Record<string, unknown> | undefined;
  let last: number | undefined;
  do {
    const out = await reading(() => db().send(
      new QueryCommand({
        TableName: logTableName(),
        ...params,
        ConsistentRead: true,
        Limit: byName ? maxRead - read : Math.min(maxRead - read, opts.limit - entries.length),
        ExclusiveStartKey: startKey,
      }),
    ));
    read += out.ScannedCount ?? 0;
    entries.push(...(out.Items ?? []).map(toEntry));
    startKey = out.LastEvaluatedKey;
    if (startKey) last = Number(startKey.sk);
  } while (startKey && entries.length < opts.limit && read < maxRead);
  return startKey ? { entries, scannedTo: last } : { entries };
}

/** One entry of the whole log (strongly consistent), or undefined when it is not stored. */
export async function getEntry(accountId: string, seq: number): Promise<LogEntry | undefined> {
  const out = await reading(() => db().send(new GetCommand({ TableName: logTableName(), Key: keys.eventEntry(keys.eventPartition(accountId), seq), ConsistentRead: true })));
  return out.Item ? toEntry(out.Item) : undefined;
}

// --- who deleted a record -------------------------------------------------------------------------

const DELETION_TTL_SECONDS = 86_400;

/** The item a deletion's transaction writes beside the record: who deleted it (read for the `*.deleted` event). */
export function deletionItem(accountId: string, type: EntityType, id: string, actor: unknown): TransactItem {
  return { Put: { TableName: tableName(), Item: { ...keys.recordDeletion(accountId, type, id), actor, [TABLE_DEFINITION.ttlAttribute]: Math.floor(Date.now() / 1000) + DELETION_TTL_SECONDS } } };
}

export async function readDeletionActor(accountId: string, type: EntityType, id: string): Promise<unknown> {
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: keys.recordDeletion(accountId, type, id), ConsistentRead: true }));
  return out.Item?.actor;
}

// --- erasure (contract §18) -----------------------------------------------------------------------

/** Every retained entry of a record's history (its partition `evr#<record>`), oldest first. */
export async function* recordEntries(accountId: string, recordId: string): AsyncGenerator<LogEntry> {
  for await (const item of queryAll({ TableName: logTableName(), ...partition(keys.eventRecordPartition(accountId, recordId)) })) yield toEntry(item);
}

/**
 * Replaces an entry's body in its three copies (the log, its event name's partition, its
 * record's partition). A copy the TTL removed meanwhile stays removed. Idempotent.
 */
export async function rewriteEntryBody(accountId: string, entry: LogEntry, body: string): Promise<void> {
  const partitions = [keys.eventPartition(accountId), keys.eventTypePartition(accountId, entry.event), keys.eventRecordPartition(accountId, entry.record_id)];
  await Promise.all(
    partitions.map((p) =>
      writeUnlessRefused({
        Update: {
          TableName: logTableName(),
          Key: keys.eventEntry(p, entry.seq),
          ...update({ set: { body } }, exists()),
        },
      }),
    ),
  );
}
