/**
 * Batch operations (contract §13), derived from an entity's definition and its domain service:
 * `<family>-batch-create / -batch-update / -batch-delete / -batch-get`, and `-batch-upsert` for
 * the families with an exact lookup index (contacts by email, companies by domain).
 *
 * Each item is the single operation applied to it (the same body parsing, custom-field and
 * reference checks, rules, derived fields and error codes: `parseRecordBody` and the service's
 * `draftOf` / `applyUpdate` / `delete`), but what a loop of single calls would read or write
 * item by item is done once for the batch:
 * - custom-field definitions are read once; every referenced record is read in one strongly
 *   consistent BatchGetItem per target type; upsert keys (their claims, then their matches) are
 *   looked up together, and an upsert's create takes its key's claim first (`upsertAll`: atomic
 *   per key);
 * - new records are written with BatchWriteItem by the family's store (entries first, then records),
 *   then checked once per target type for a reference renamed or deleted meanwhile (the single
 *   create's reconcile, for the few that need it);
 * - updates keep their per-record optimistic locking (a lost race re-reads that record only) and
 *   run concurrently, each answered with the account's meta its own read brought (as a single
 *   update); deletes call the service's delete (so they follow whatever it does);
 * - the account's meta (current computed names) is read once for all other results.
 * Events come from the table's stream for every record written, as for single writes.
 */
import { randomUUID } from 'node:crypto';
import { newestFirst, type StoredRecord, type TransactItem } from '../db/items.js';
import { readMeta } from '../db/meta.js';
import { createRecords, readClaims, takeClaims, targetReads, type UpsertClaim } from '../db/record-store.js';
import type { ReferenceTarget } from '../db/table.js';
import { trashedIds } from '../db/trash.js';
import { ApiError, type Family, internal, invalidRequest } from '../errors.js';
import { customField, type Entity, type EntityDefinition, refFields } from '../schemas/entities/index.js';
import { requireId } from '../schemas/common.js';
import { isUuid } from '../schemas/primitives.js';
import { type ParsedBody, parseRecordBody } from '../schemas/record-body.js';
import { actorOf, type OperationContext } from './context.js';
import { type CustomFieldEntity, listDefinitions } from './custom-fields.js';
import type { Preloaded, Resolved } from './records/references.js';
import { normalizeLookupKey, recordsByLookup } from './lookups.js';
import { draftOf } from './records/create.js';
import { bulkPlacement } from './records/placement.js';
import { remove } from './records/delete.js';
import { familyOf, type RecordFamily, toApi, writing } from './records/family.js';
import { reconcile } from './records/references.js';
import { checkSuppressed } from './records/suppression.js';
import { applyUpdate } from './records/update.js';

export type BatchAction = 'created' | 'updated' | 'unchanged' | 'deleted';
export type ItemError = ReturnType<ApiError['toJSON']>;
export type ItemResult<R> = { index: number; ok: true; action: BatchAction; record?: R } | { index: number; ok: false; error: ItemError };
export interface BatchResults<R> {
  results: ItemResult<R>[];
}

/** Items of one batch whose writes run at once (updates and deletes: one optimistic write each). */
const CONCURRENCY = 16;

async function eachConcurrently<T>(items: readonly T[], fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, items.length) }, async () => {
    while (next < items.length) await fn(items[next++]!);
  }));
}

const isObject = (x: unknown): x is Record<string, unknown> => x !== null && typeof x === 'object' && !Array.isArray(x);

/** Records of one type (or members: owners, assignees) by id, strongly consistent (a batch's reference checks). */
const readRecords = (type: string, accountId: string, ids: readonly string[]) => targetReads(type as ReferenceTarget).getManyConsistent(accountId, ids);

type Rec = Record<string, unknown>;
type Slot = { index: number; result?: ItemResult<Rec> };

/** What the batch operations of one family work from. */
interface Batch {
  def: EntityDefinition;
  family: Family;
  fam: RecordFamily;
  cfField: string | undefined;
  refs: ReturnType<typeof refFields>;
}

/** An item's failure: the single operation's error; anything unexpected is `<family>.internal` for that item. */
const failure = (b: Batch, index: number, error: unknown): ItemResult<Rec> => ({ index, ok: false, error: (error instanceof ApiError ? error : internal(b.family, error)).toJSON() });
const duplicate = (b: Batch, what: string) => new ApiError(`${b.family}.duplicate_in_batch`, `${what} occurs on an earlier item of this batch`, [{ path: what.split(' ')[0]!, message: 'duplicate in batch' }]);
const notAnObject = (b: Batch) => invalidRequest(b.family, 'item must be a JSON object');

/** One read of the custom-field definitions and one consistent BatchGetItem per referenced type, for every item. */
async function preload(b: Batch, ctx: OperationContext, bodies: readonly ParsedBody[]): Promise<Preloaded> {
  const { def, cfField, refs } = b;
  const usesCustom = cfField && bodies.some((b) => isObject(b.fields[cfField]) && Object.keys(b.fields[cfField] as object).length > 0);
  const idsByTarget = new Map<string, Set<string>>();
  for (const b of bodies) {
    for (const ref of refs) {
      const value = b.fields[ref.field];
      const ids = Array.isArray(value) ? value : value === null || value === undefined ? [] : [value];
      const set = idsByTarget.get(ref.target) ?? new Set<string>();
      for (const id of ids) if (typeof id === 'string' && isUuid(id)) set.add(id.toLowerCase());
      idsByTarget.set(ref.target, set);
    }
  }
  const [definitions, ...loaded] = await Promise.all([
    usesCustom ? listDefinitions(ctx.accountId, def.type as CustomFieldEntity) : undefined,
    ...[...idsByTarget].map(async ([target, ids]) => [target, ids.size ? await readRecords(target, ctx.accountId, [...ids]) : new Map<string, StoredRecord>()] as const),
  ]);
  return { definitions, records: new Map(loaded as Array<readonly [string, Map<string, StoredRecord>]>) };
}

/** A create of a batch: an import chunk's brings its id and creation time; an upsert's, the claim of its key as read. */
interface NewItem {
  slot: Slot;
  body: ParsedBody;
  id?: string;
  now?: string;
  claim?: { key: string; seen: UpsertClaim };
}

/**
 * The single create's drafts, one bulk write, then the single create's reconcile for records
 * whose references changed meanwhile. An item may bring its id and creation time (an import
 * chunk's, derived from its rows): with `skipExisting`, a record that exists already (written by
 * an earlier attempt at the chunk) is kept as it is. A create by an upsert (`claim`) first takes
 * its key's claim; those that lose it to a concurrent upsert are returned (unanswered) for the
 * upsert to resolve again.
 */
async function createAll<T extends NewItem>(b: Batch, ctx: OperationContext, items: readonly T[], pre: Preloaded, opts: { skipExisting?: boolean; place?: boolean } = {}): Promise<T[]> {
  const drafted: Array<{ item: T; draft: Record<string, unknown>; resolved: Resolved[]; now: string; id?: string; checks?: TransactItem[]; record?: StoredRecord }> = [];
  await Promise.all(
    items.map(async (item) => {
      try {
        const d = await draftOf(b.fam, ctx, item.body, { id: item.id, bulk: !opts.place }, pre);
        drafted.push({ item, ...d, ...(item.now ? { now: item.now } : {}) });
      } catch (error) {
        item.slot.result = failure(b, item.slot.index, error);
      }
    }),
  );
  // A create by an upsert takes its key's claim first (one transaction per 100 keys); those that
  // lost it to another upsert go back to the upsert, the others are written with the rest.
  const lost: T[] = [];
  const ids = new Map<(typeof drafted)[number], string>();
  const claiming = drafted.filter((d) => d.item.claim).map((d) => ({ d, key: d.item.claim!.key, seen: d.item.claim!.seen, id: d.item.id ?? randomUUID() }));
  if (claiming.length) {
    try {
      const taken = await takeClaims(b.fam.store.type, ctx.accountId, claiming);
      // One create per key: a key given twice in the batch is taken for its first item, the other resolves again.
      const first = new Map<string, (typeof claiming)[number]>();
      for (const c of claiming) if (!first.has(c.key)) first.set(c.key, c);
      for (const c of claiming) {
        if (taken.has(c.key) && first.get(c.key) === c) ids.set(c.d, c.id);
        else lost.push(c.d.item);
      }
    } catch (error) {
      for (const c of claiming) c.d.item.slot.result = failure(b, c.d.item.slot.index, error);
    }
  }
  // Records placed in a pipeline (contract §19; an import's, `place`): written by the projects' hook, each with its stage items.
  await bulkPlacement.create?.(b.fam, ctx, drafted, opts.skipExisting, (d, error) => (d.item.slot.result = failure(b, d.item.slot.index, error)));
  const bulk = drafted.filter((d) => !d.checks && (!d.item.claim || ids.has(d)));
  if (bulk.length) {
    try {
      const stored = await createRecords(
        b.fam.store,
        bulk.map((d) => ({ accountId: ctx.accountId, userId: ctx.userId, fields: d.draft, now: d.now, actor: actorOf(ctx), ...((ids.get(d) ?? d.item.id) ? { id: ids.get(d) ?? d.item.id } : {}) })),
        opts,
      );
      bulk.forEach((d, i) => (d.record = stored[i]));
    } catch (error) {
      for (const d of bulk) d.item.slot.result = failure(b, d.item.slot.index, error);
    }
  }
  const written = drafted.filter((d) => d.record);
  // Linked records renamed or deleted since they were read: one read per target type finds them.
  const linked = new Map<string, Map<string, number>>();
  for (const d of written) for (const r of d.resolved) for (const l of r.linked) linked.set(r.target, (linked.get(r.target) ?? new Map()).set(l.id, l.ver));
  const now = new Map(await Promise.all([...linked].map(async ([target, vers]) => [target, await readRecords(target, ctx.accountId, [...vers.keys()])] as const)));
  const stale = (r: Resolved) => r.linked.some((l) => now.get(r.target)?.get(l.id)?.ver !== l.ver);
  await eachConcurrently(written, async (d) => {
    try {
      const current = d.resolved.some(stale) ? await writing(b.fam, () => reconcile(b.fam, ctx.accountId, d.record!, d.resolved, actorOf(ctx))) : d.record!;
      d.item.slot.result = { index: d.item.slot.index, ok: true, action: 'created', record: toApi(b.fam, current) };
    } catch (error) {
      d.item.slot.result = failure(b, d.item.slot.index, error);
    }
  });
  return lost;
}

/**
 * The single update per item (optimistic locking, rules, events), concurrently, with the batch's
 * preloaded reads. With `gone`, the items whose record no longer exists are returned
 * (unanswered) instead of answered `not_found`: an upsert's match deleted meanwhile.
 */
async function updateAll<T extends { slot: Slot; body: ParsedBody }>(b: Batch, ctx: OperationContext, items: readonly T[], pre: Preloaded, gone = false): Promise<T[]> {
  const done: Array<{ slot: Slot } & Awaited<ReturnType<typeof applyUpdate>>> = [];
  const lost: T[] = [];
  await eachConcurrently(items, async (item) => {
    try {
      done.push({ slot: item.slot, ...(await applyUpdate(b.fam, ctx, item.body, pre)) });
    } catch (error) {
      if (gone && error instanceof ApiError && error.code === `${b.family}.not_found`) lost.push(item);
      else item.slot.result = failure(b, item.slot.index, error);
    }
  });
  for (const d of done) d.slot.result = { index: d.slot.index, ok: true, action: d.changed ? 'updated' : 'unchanged', record: toApi(b.fam, d.stored, d.meta) };
  return lost;
}

const finish = (slots: Slot[]): BatchResults<Rec> => ({ results: slots.map((s) => s.result!) });

/** Parses each item as its single operation would; an item that fails gets its error at once. */
function parseEach(b: Batch, slots: Slot[], items: readonly unknown[], parse: (item: Record<string, unknown>, slot: Slot) => ParsedBody | undefined) {
  const parsed: Array<{ slot: Slot; body: ParsedBody }> = [];
  items.forEach((item, i) => {
    const slot = slots[i]!;
    try {
      if (!isObject(item)) throw notAnObject(b);
      const body = parse(item, slot);
      if (body) parsed.push({ slot, body });
    } catch (error) {
      slot.result = failure(b, i, error);
    }
  });
  return parsed;
}

const slotsFor = (items: readonly unknown[]): Slot[] => items.map((_, index) => ({ index }));

/**
 * `-batch-create` and `-batch-update`: each item parsed as its single operation (an update's id
 * once per batch), the batch's reads preloaded, then `write` (createAll or updateAll: a batch's
 * bundle carries only its own).
 */
async function batchWrite(
  b: Batch,
  ctx: OperationContext,
  items: readonly unknown[],
  mode: 'create' | 'update',
  write: (b: Batch, ctx: OperationContext, items: Array<{ slot: Slot; body: ParsedBody }>, pre: Preloaded) => Promise<unknown>,
): Promise<BatchResults<Rec>> {
  const slots = slotsFor(items);
  const seen = new Set<string>();
  const parsed = parseEach(b, slots, items, (item) => {
    const id = mode === 'update' && typeof item.id === 'string' && isUuid(item.id) ? item.id.toLowerCase() : undefined;
    if (id !== undefined && seen.has(id)) throw duplicate(b, `id ${id}`);
    if (id !== undefined) seen.add(id);
    return parseRecordBody(b.def, item, mode);
  });
  await write(b, ctx, parsed, await preload(b, ctx, parsed.map((p) => p.body)));
  return finish(slots);
}

// Placed in a pipeline where the function carries the projects' placement (contract §19), each such item in its own transaction.
const batchCreate = (b: Batch, ctx: OperationContext, items: readonly unknown[]) => batchWrite(b, ctx, items, 'create', (b2, c, parsed, pre) => createAll(b2, c, parsed, pre, { place: true }));
const batchUpdate = (b: Batch, ctx: OperationContext, items: readonly unknown[]) => batchWrite(b, ctx, items, 'update', updateAll);

async function batchDelete(b: Batch, ctx: OperationContext, ids: readonly unknown[]): Promise<BatchResults<Rec>> {
  const { family } = b;
  const slots = slotsFor(ids);
  const seen = new Set<string>();
  const valid: Array<{ slot: Slot; id: string }> = [];
  ids.forEach((raw, i) => {
    try {
      const id = requireId(family, { id: raw });
      if (seen.has(id)) throw duplicate(b, `id ${id}`);
      seen.add(id);
      valid.push({ slot: slots[i]!, id });
    } catch (error) {
      slots[i]!.result = failure(b, i, error);
    }
  });
  await eachConcurrently(valid, async ({ slot, id }) => {
    try {
      await remove(b.fam, ctx, id);
      slot.result = { index: slot.index, ok: true, action: 'deleted' };
    } catch (error) {
      slot.result = failure(b, slot.index, error);
    }
  });
  return finish(slots);
}

/** `{ items, not_found }`: the records in input order (an id given twice is answered once); ids must be UUIDs. */
async function batchGet(b: Batch, ctx: OperationContext, ids: readonly unknown[]): Promise<{ items: Rec[]; not_found: string[] }> {
  const { family } = b;
  const wanted = ids.map((raw, i) => {
    try {
      return requireId(family, { id: raw });
    } catch (error) {
      const e = error as ApiError;
      throw new ApiError(e.code, `ids.${i}: ${e.message}`, [{ path: `ids.${i}`, message: e.details?.[0]?.message ?? e.message }]);
    }
  });
  const distinct = [...new Set(wanted)];
  const [found, meta] = await Promise.all([b.fam.store.getManyConsistent(ctx.accountId, distinct), readMeta(ctx.accountId)]);
  return {
    items: distinct.flatMap((id) => (found.has(id) ? [toApi(b.fam, found.get(id)!, meta)] : [])),
    not_found: distinct.filter((id) => !found.has(id)),
  };
}

/** An item of an upsert: its normalized key and its fields (the key's among them); an import row's id and creation time. */
interface UpsertItem {
  slot: Slot;
  key: string;
  fields: Record<string, unknown>;
  id?: string;
  now?: string;
}

/** Rounds of an upsert's resolution (each: the claims, the matches, the writes); an item still unresolved is a conflict. */
export const UPSERT_ROUNDS = 8;
/** Pause before another round: a record another upsert is still writing, or a lost claim. */
const roundPauseMs = (round: number) => Math.min(1_000, 25 * 2 ** round) * (0.5 + Math.random() / 2);
/** How long a claim whose record is neither written nor trashed counts as still being written (then as abandoned: a crash). */
export const CLAIM_IN_FLIGHT_MS = 60_000;

/**
 * Upsert by the definition's lookup field (contract §13, as an upsert import): the most recently
 * created record with the same key (without case) is updated with the item's fields (the stored
 * spelling of the key stays), otherwise a record is created.
 *
 * Atomic per key, through the key's upsert claim (`{ n, id, at }`, shared/db/batch.ts). Each
 * round reads the claims, then (strongly consistent) the matches; an item without a match takes
 * the claim, conditioned on the claim read, before its record is written. Of concurrent upserts
 * that found no match, one takes the claim and creates; the others resolve again and find its
 * record (the claim names it, even before the lookup index has it): `updated` or `unchanged`.
 * A claim whose record is not written yet (and not trashed) is waited for, up to
 * CLAIM_IN_FLIGHT_MS (then it was abandoned by a crash); one whose record was trashed or no
 * longer has the key is moved on by the next create. An update whose match was deleted
 * meanwhile resolves again too. Plain creates do not take the claim: a create with an email
 * that exists is allowed (§3), and an upsert then matches the newest record.
 * With `skipExisting` (an import chunk applied again), an item whose own id exists is `created`.
 */
/**
 * The upsert keys an erasure suppressed (contract §18), with their `<family>.email_suppressed`
 * error: one read per distinct key, at once. An upsert or an import row matching a record that
 * holds such an address must not write it again.
 */
async function suppressedKeys(b: Batch, ctx: OperationContext, keys: readonly string[]): Promise<Map<string, unknown>> {
  const refused = new Map<string, unknown>();
  if (!b.def.erase) return refused;
  await Promise.all(
    [...new Set(keys)].map(async (key) => {
      try {
        await checkSuppressed(b.fam, ctx.accountId, key);
      } catch (error) {
        refused.set(key, error);
      }
    }),
  );
  return refused;
}

async function upsertAll(b: Batch, ctx: OperationContext, items: readonly UpsertItem[], opts: { skipExisting?: boolean } = {}): Promise<void> {
  const { def, family } = b;
  const lookup = def.lookup!;
  const type = def.type as 'contact' | 'company';
  let pending = [...items];
  const own = opts.skipExisting ? pending.flatMap((u) => (u.id ? [u.id] : [])) : [];
  if (own.length) {
    const existing = await b.fam.store.getManyConsistent(ctx.accountId, own);
    for (const u of pending) if (u.id && existing.has(u.id)) u.slot.result = { index: u.slot.index, ok: true, action: 'created', record: toApi(b.fam, existing.get(u.id)!) };
    pending = pending.filter((u) => !u.slot.result);
  }
  // A suppressed address (contract §18) is refused, even when it matches a record that holds it.
  const refused = await suppressedKeys(b, ctx, pending.map((u) => u.key));
  for (const u of pending) if (refused.has(u.key)) u.slot.result = failure(b, u.slot.index, refused.get(u.key));
  pending = pending.filter((u) => !u.slot.result);
  const hasKey = (r: StoredRecord, key: string) => normalizeLookupKey(String(r[lookup.field] ?? '').trim()) === key;
  for (let round = 1; pending.length > 0; round++) {
    if (round > UPSERT_ROUNDS) {
      const error = new ApiError(`${family}.conflict`, `the ${lookup.field} is being upserted by other requests; retry`);
      for (const u of pending) u.slot.result = failure(b, u.slot.index, error);
      return;
    }
    if (round > 1) await new Promise((r) => setTimeout(r, roundPauseMs(round)));
    // The claims first: a create by another upsert after this read takes a claim, and fails ours.
    const claims = await readClaims(b.fam.store.type, ctx.accountId, pending.map((u) => u.key));
    const matches = await recordsByLookup(ctx.accountId, type, lookup.index, pending.map((u) => u.key));
    // Keys without a match whose claim names another record: written since the lookup (the
    // match), trashed or moved to another key (the claim is free), or still being written (wait).
    const named = [...new Set(pending.flatMap((u) => (matches.has(u.key) ? [] : [claims.get(u.key)!.id ?? ''])).filter((id) => id !== ''))];
    const [claimed, trashed] = named.length ? await Promise.all([b.fam.store.getManyConsistent(ctx.accountId, named), trashedIds(ctx.accountId, type, named)]) : [new Map<string, StoredRecord>(), new Set<string>()];
    const creates: Array<NewItem & { upsert: UpsertItem }> = [];
    const updates: Array<{ slot: Slot; body: ParsedBody; upsert: UpsertItem }> = [];
    const waiting: UpsertItem[] = [];
    for (const u of pending) {
      try {
        const claim = claims.get(u.key)!;
        const named = claim.id && claim.id !== u.id ? claimed.get(claim.id) : undefined;
        const match = [...(matches.get(u.key) ?? [])].sort(newestFirst)[0] ?? (named && hasKey(named, u.key) ? named : undefined);
        if (!match && claim.id && claim.id !== u.id && !named && !trashed.has(claim.id) && Date.now() - (claim.at ?? 0) < CLAIM_IN_FLIGHT_MS) {
          waiting.push(u);
        } else if (!match) {
          creates.push({ slot: u.slot, body: parseRecordBody(def, u.fields, 'create'), id: u.id, now: u.now, claim: { key: u.key, seen: claim }, upsert: u });
        } else if (u.id !== undefined && match.id === u.id) {
          u.slot.result = { index: u.slot.index, ok: true, action: 'created', record: toApi(b.fam, match) }; // an earlier attempt at this import chunk
        } else {
          const body: Record<string, unknown> = { ...u.fields, id: match.id };
          if (hasKey(match, u.key)) delete body[lookup.field];
          updates.push({ slot: u.slot, body: parseRecordBody(def, body, 'update'), upsert: u });
        }
      } catch (error) {
        u.slot.result = failure(b, u.slot.index, error);
      }
    }
    const pre = await preload(b, ctx, [...creates, ...updates].map((p) => p.body));
    const [lostCreates, lostUpdates] = await Promise.all([createAll(b, ctx, creates, pre), updateAll(b, ctx, updates, pre, true)]);
    pending = [...waiting, ...[...lostCreates, ...lostUpdates].map((x) => x.upsert)];
  }
}

async function batchUpsert(b: Batch, ctx: OperationContext, items: readonly unknown[]): Promise<BatchResults<Rec>> {
  const { def, family } = b;
  const lookup = def.lookup;
  if (!lookup) throw invalidRequest(family, `${family} have no upsert key`);
  const slots = slotsFor(items);
  const keyed: UpsertItem[] = [];
  const seen = new Set<string>();
  items.forEach((item, i) => {
    try {
      if (!isObject(item)) throw notAnObject(b);
      if ('id' in item) parseRecordBody(def, item, 'create'); // names `id` (and any other misplaced field) as the create would
      const raw = item[lookup.field];
      if (typeof raw !== 'string' || raw.trim() === '') {
        throw invalidRequest(family, `${lookup.field} is required to match a ${def.label} by`, [{ path: lookup.field, message: 'is required (a non-blank string)' }]);
      }
      const key = normalizeLookupKey(raw.trim());
      if (seen.has(key)) throw duplicate(b, `${lookup.field} ${raw.trim()}`);
      seen.add(key);
      keyed.push({ slot: slots[i]!, fields: item, key });
    } catch (error) {
      slots[i]!.result = failure(b, i, error);
    }
  });
  await upsertAll(b, ctx, keyed);
  return finish(slots);
}

/**
 * An import chunk (contract §10) through the batch path, so imports share the single
 * operations' validation, rules, reference checks and writes: `creates` as `-batch-create`, with
 * the ids and the creation time the worker derives from its rows (a chunk applied again after a
 * crash writes the same items, and records that exist already are kept); `updates` as
 * `-batch-update`. A create with a `key` (an upsert import's row that found no match) is an
 * upsert of that key, atomic with concurrent batches and imports (`upsertAll`): it may end as an
 * update of a record another upsert created meanwhile. Results in the order given: the creates,
 * then the updates.
 */
async function applyChunk(
  b: Batch,
  ctx: OperationContext,
  creates: ReadonlyArray<{ id: string; body: ParsedBody; key?: string }>,
  updates: readonly ParsedBody[],
  createdAt: string,
): Promise<ItemResult<Rec>[]> {
  const slots = slotsFor([...creates, ...updates]);
  const plain = creates.flatMap((c, i) => (c.key === undefined ? [{ slot: slots[i]!, body: c.body, id: c.id, now: createdAt }] : []));
  const upserts = creates.flatMap((c, i) => (c.key === undefined ? [] : [{ slot: slots[i]!, key: c.key, fields: c.body.fields, id: c.id, now: createdAt }]));
  const pre = await preload(b, ctx, [...plain.map((c) => c.body), ...updates]);
  await Promise.all([
    createAll(b, ctx, plain, pre, { skipExisting: true, place: true }),
    upserts.length ? upsertAll(b, ctx, upserts, { skipExisting: true }) : undefined,
    updateAll(b, ctx, updates.map((body, i) => ({ slot: slots[creates.length + i]!, body })), pre),
  ]);
  return slots.map((s) => s.result!);
}

const batches = new WeakMap<object, Batch>();
function batchOf(entity: Entity): Batch {
  let b = batches.get(entity);
  if (!b) {
    const def = entity as EntityDefinition;
    batches.set(entity, (b = { def, family: def.family, fam: familyOf(def), cfField: customField(def), refs: refFields(def) }));
  }
  return b;
}

// One exported function per batch operation (shared/http/batch.ts calls only its own, so a
// batch-get's bundle does not carry the create and update rules).
export const batchCreateOf = (entity: Entity, ctx: OperationContext, items: readonly unknown[]) => batchCreate(batchOf(entity), ctx, items);
export const batchUpdateOf = (entity: Entity, ctx: OperationContext, items: readonly unknown[]) => batchUpdate(batchOf(entity), ctx, items);
export const batchUpsertOf = (entity: Entity, ctx: OperationContext, items: readonly unknown[]) => batchUpsert(batchOf(entity), ctx, items);
export const batchDeleteOf = (entity: Entity, ctx: OperationContext, ids: readonly unknown[]) => batchDelete(batchOf(entity), ctx, ids);
export const batchGetOf = (entity: Entity, ctx: OperationContext, ids: readonly unknown[]) => batchGet(batchOf(entity), ctx, ids);

/** Every batch operation of a family, and the import worker's `applyChunk`. */
export function batchService<D extends Entity>(entity: D) {
  const b = batchOf(entity);
  return {
    definition: entity,
    batchCreate: (ctx: OperationContext, items: readonly unknown[]) => batchCreate(b, ctx, items),
    batchUpdate: (ctx: OperationContext, items: readonly unknown[]) => batchUpdate(b, ctx, items),
    batchDelete: (ctx: OperationContext, ids: readonly unknown[]) => batchDelete(b, ctx, ids),
    batchGet: (ctx: OperationContext, ids: readonly unknown[]) => batchGet(b, ctx, ids),
    batchUpsert: (ctx: OperationContext, items: readonly unknown[]) => batchUpsert(b, ctx, items),
    suppressedKeys: (ctx: OperationContext, keys: readonly string[]) => suppressedKeys(b, ctx, keys),
    applyChunk: (ctx: OperationContext, creates: ReadonlyArray<{ id: string; body: ParsedBody; key?: string }>, updates: readonly ParsedBody[], createdAt: string) => applyChunk(b, ctx, creates, updates, createdAt),
  };
}

