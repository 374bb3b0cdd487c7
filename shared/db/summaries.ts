/**
 * The summary counters in the control table (contract §21; docs/data-model.md "Summary
 * counters"): every DynamoDB call of them.
 *
 * - Counter: `A#<acct>#sm#<dimension> / <group>`: `n` (records), and for projects per `<bucket>|<currency>`
 *   `a:<bucket>|<currency>` (the sum of their amounts, cents) and `k:<bucket>|<currency>` (how many
 *   of them have an amount); `at` (the stream time of the newest change applied to it). Top-level
 *   attributes rather than a map: ADD only reaches top-level attributes.
 * - Marker: `A#<acct>#smid#<event id> / M`, put (if absent) in the transaction that counts the
 *   change, expiring after 14 days.
 */
import { QueryCommand, type QueryCommandInput } from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { controlTableName } from './control.js';
import { dbClient, tableName } from './client.js';
import { notExists, partition, type TransactItem, transact, update } from './expr.js';
import { queryAll, scanPages } from './items.js';
import { type EntityType, keys, RECORD_SK, summaryKeys, TABLE_DEFINITION } from './table.js';

/**
 * What a counter item holds: `n`, and by `<bucket>|<currency>` the amounts' sum (a BigInt: a sum
 * of amounts of up to 2^53 − 1 cents each, exact in DynamoDB's 38 digits) and count.
 */
export interface CounterValues {
  n: number;
  sums: Record<string, bigint>;
  counts: Record<string, number>;
}

export interface CounterItem extends CounterValues {
  group: string;
  at?: string;
}

/** A change to one counter (values to ADD: negative ones subtract). */
export interface CounterDelta extends CounterValues {
  accountId: string;
  dimension: string;
  group: string;
}

const SUM = 'a:';
const COUNT = 'k:';
/** How long a change's marker is kept: longer than any redelivery (the queue keeps a message at most 14 days). */
const MARKER_TTL_SECONDS = 14 * 86_400;

export const counterId = (d: { accountId: string; dimension: string; group: string }) => `${d.accountId}\n${d.dimension}\n${d.group}`;

const counterKey = (d: { accountId: string; dimension: string; group: string }) => summaryKeys.summaryCounter(d.accountId, d.dimension, d.group);

/** The transaction item that adds `delta` to its counter (and sets `at`, when given). */
function counterUpdate(delta: CounterDelta, at?: string): TransactItem | undefined {
  const add: [string, number | bigint][] = [];
  if (delta.n) add.push(['n', delta.n]);
  for (const [k, v] of Object.entries(delta.sums)) if (v) add.push([`${SUM}${k}`, v]);
  for (const [k, v] of Object.entries(delta.counts)) if (v) add.push([`${COUNT}${k}`, v]);
  if (!add.length) return undefined;
  // `account_id` and `dim` name the counter for the rebuild's scan of every account.
  const set = { account_id: delta.accountId, dim: delta.dimension, ...(at ? { at } : {}) };
  return { Update: { TableName: controlTableName(), Key: counterKey(delta), ...update({ add, set }) } };
}

const markerPut = (accountId: string, eventId: string): TransactItem => ({
  Put: {
    TableName: controlTableName(),
    Item: { ...summaryKeys.summaryMarker(accountId, eventId), [TABLE_DEFINITION.ttlAttribute]: Math.floor(Date.now() / 1000) + MARKER_TTL_SECONDS },
    ...notExists(),
  },
});

/** One transaction's worth: the changes it marks (account, event id) and the counters' deltas. */
export interface CounterWrite {
  markers: { accountId: string; eventId: string }[];
  deltas: CounterDelta[];
  /** The newest change's stream time among them. */
  at: string;
}

/** At most this many items in one transaction (DynamoDB's limit). */
export const MAX_TRANSACTION_ITEMS = 100;
/**
 * At most this many attributes added by one counter update: an expression is at most 4 KB, and a
 * sum's placeholders (`#a_<stage id>_<currency>`, its value's) take about 90 characters.
 */
export const MAX_COUNTER_ATTRIBUTES = 30;

/** The attributes a delta adds to (its non-zero values). */
export const attributesOf = (delta: CounterValues): string[] => [
  ...(delta.n ? ['n'] : []),
  ...Object.entries(delta.sums).flatMap(([k, v]) => (v ? [`${SUM}${k}`] : [])),
  ...Object.entries(delta.counts).flatMap(([k, v]) => (v ? [`${COUNT}${k}`] : [])),
];

/**
 * Writes one transaction: the markers (each only if absent) and the counters' additions. Returns
 * false when a marker was already there (nothing written: the caller retries change by change),
 * true when written; anything else throws.
 */
export async function applyCounterWrite(write: CounterWrite): Promise<boolean> {
  const items = [...write.markers.map((m) => markerPut(m.accountId, m.eventId)), ...write.deltas.flatMap((d) => counterUpdate(d, write.at) ?? [])];
  if (items.length > MAX_TRANSACTION_ITEMS) throw new Error(`a summary transaction of ${items.length} items`);
  if (!items.length) return true;
  const refused = await transact(items);
  if (!refused) return true;
  if (refused.at.every((i) => i < write.markers.length)) return false;
  throw refused.error;
}

/**
 * Adds corrections to counters without markers (the rebuild's: additive, so they commute with
 * live deltas), a counter's in pieces of at most `MAX_COUNTER_ATTRIBUTES` attributes, one update each.
 */
export async function addToCounters(deltas: CounterDelta[]): Promise<void> {
  for (const d of deltas) {
    const values = attributesOf(d);
    for (let i = 0; i < values.length; i += MAX_COUNTER_ATTRIBUTES) {
      const piece = new Set(values.slice(i, i + MAX_COUNTER_ATTRIBUTES));
      const pick = <V>(m: Record<string, V>, prefix: string): Record<string, V> => Object.fromEntries(Object.entries(m).filter(([k]) => piece.has(`${prefix}${k}`)));
      const item = counterUpdate({ ...d, n: piece.has('n') ? d.n : 0, sums: pick(d.sums, SUM), counts: pick(d.counts, COUNT) });
      if (item) await transact([item]);
    }
  }
}

/** A counter as stored, its numbers read as written (`wrapNumbers`: a sum may pass 2^53). */
function counterOf(item: Record<string, unknown>): CounterItem {
  const raw = unmarshall(item as never, { wrapNumbers: true });
  const out: CounterItem = { group: String(raw[TABLE_DEFINITION.sortKey]), n: Number(String(raw.n ?? 0)), sums: {}, counts: {} };
  if (typeof raw.at === 'string') out.at = raw.at;
  for (const [k, v] of Object.entries(raw)) {
    if (k.startsWith(SUM)) out.sums[k.slice(SUM.length)] = BigInt(String(v));
    else if (k.startsWith(COUNT)) out.counts[k.slice(COUNT.length)] = Number(String(v));
  }
  return out;
}

/** One Query page of the control table with the low-level client (its items unmarshalled by counterOf). */
async function queryPage(input: Omit<QueryCommandInput, 'TableName' | 'ExpressionAttributeValues'> & { ExpressionAttributeValues?: Record<string, unknown> }) {
  const { ExpressionAttributeValues: values, ...rest } = input;
  return dbClient().send(new QueryCommand({ TableName: controlTableName(), ...rest, ...(values ? { ExpressionAttributeValues: marshall(values) } : {}), ConsistentRead: true }));
}

/**
 * The counters of one dimension's partition (strongly consistent), optionally only the groups
 * between `from` and `to` (inclusive): one Query, at most `limit` items (its groups are bounded).
 */
export async function readCounters(accountId: string, dimension: string, range?: { from: string; to: string }, limit = 100): Promise<CounterItem[]> {
  const pk = summaryKeys.summaryPartition(accountId, dimension);
  const out = await queryPage({ ...partition(pk, range ? ['between', range.from, range.to] : undefined), Limit: limit });
  return (out.Items ?? []).map(counterOf);
}

/** Every counter of one dimension's partition, page after page (the rebuild's read). */
export async function allCounters(accountId: string, dimension: string): Promise<CounterItem[]> {
  const out: CounterItem[] = [];
  let start: QueryCommandInput['ExclusiveStartKey'];
  do {
    const page = await queryPage({ ...partition(summaryKeys.summaryPartition(accountId, dimension)), ...(start ? { ExclusiveStartKey: start } : {}) });
    out.push(...(page.Items ?? []).map(counterOf));
    start = page.LastEvaluatedKey;
  } while (start);
  return out;
}

/** Every record of one type of an account (its list partition, GSI1: all attributes), a page at a time. */
export async function* recordsOf(accountId: string, type: EntityType): AsyncGenerator<Record<string, unknown>> {
  yield* queryAll({ IndexName: TABLE_DEFINITION.gsi1.name, ...partition(keys.listPartition(accountId, type), undefined, 'gsi1') });
}

/** The accounts that hold records of `types` or summary counters (a Scan of both tables: the rebuild of every account). */
export async function accountsWithSummaries(types: readonly EntityType[], segments = 4): Promise<Set<string>> {
  const accounts = new Set<string>();
  const counted = new Set<unknown>(types);
  await scanPages(tableName(), segments, async (items) => {
    for (const raw of items) if (counted.has(raw[TABLE_DEFINITION.entityTypeAttribute]) && raw[TABLE_DEFINITION.sortKey] === RECORD_SK && typeof raw.account_id === 'string') accounts.add(raw.account_id);
  });
  await scanPages(controlTableName(), segments, async (items) => {
    for (const raw of items) if (typeof raw.dim === 'string' && typeof raw.account_id === 'string') accounts.add(raw.account_id);
  });
  return accounts;
}
