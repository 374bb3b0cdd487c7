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
 *   consistent BatchGetItem per target type; upsert keys are looked up together;
 * - new records are written with BatchWriteItem by the family's store (entries first, then records),
 *   then checked once per target type for a reference renamed or deleted meanwhile (the single
 *   create's reconcile, for the few that need it);
 * - updates keep their per-record optimistic locking (a lost race re-reads that record only) and
 *   run concurrently; deletes call the service's delete (so they follow whatever it does);
 * - the account's meta (current computed names) is read once for all results.
 * Events come from the table's stream for every record written, as for single writes.
 */
import { newestFirst, type StoredRecord } from '../db/items.js';
import { readMeta } from '../db/meta.js';
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
import { remove } from './records/delete.js';
import { familyOf, type RecordFamily, storeOfType, toApi, writing } from './records/family.js';
import { reconcile } from './records/references.js';
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

/** Records of one type by id, strongly consistent (a batch's reference checks). */
const readRecords = (type: string, accountId: string, ids: readonly string[]) => storeOfType(type)!.getManyConsistent(accountId, ids);

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

/**
 * The single create's drafts, one bulk write, then the single create's reconcile for records
 * whose references changed meanwhile. An item may bring its id and creation time (an import
 * chunk's, derived from its rows): with `skipExisting`, a record that exists already (written by
 * an earlier attempt at the chunk) is kept as it is.
 */
async function createAll(b: Batch, ctx: OperationContext, items: Array<{ slot: Slot; body: ParsedBody; id?: string; now?: string }>, pre: Preloaded, opts: { skipExisting?: boolean } = {}): Promise<void> {
  const drafted: Array<{ slot: Slot; draft: Record<string, unknown>; resolved: Resolved[]; now: string; id?: string }> = [];
  await Promise.all(
    items.map(async ({ slot, body, id, now }) => {
      try {
        const d = await draftOf(b.fam, ctx, body, {}, pre);
        drafted.push({ slot, ...d, ...(now ? { now } : {}), id });
      } catch (error) {
        slot.result = failure(b, slot.index, error);
      }
    }),
  );
  if (drafted.length === 0) return;
  let stored: StoredRecord[];
  try {
    stored = await b.fam.store.createMany(
      drafted.map((d) => ({ accountId: ctx.accountId, userId: ctx.userId, fields: d.draft, now: d.now, actor: actorOf(ctx), ...(d.id ? { id: d.id } : {}) })),
      opts,
    );
  } catch (error) {
    for (const d of drafted) d.slot.result = failure(b, d.slot.index, error);
    return;
  }
  // Linked records renamed or deleted since they were read: one read per target type finds them.
  const linked = new Map<string, Map<string, number>>();
  for (const d of drafted) for (const r of d.resolved) for (const l of r.linked) linked.set(r.target, (linked.get(r.target) ?? new Map()).set(l.id, l.ver));
  const now = new Map(await Promise.all([...linked].map(async ([target, vers]) => [target, await readRecords(target, ctx.accountId, [...vers.keys()])] as const)));
  const stale = (r: Resolved) => r.linked.some((l) => now.get(r.target)?.get(l.id)?.ver !== l.ver);
  await eachConcurrently(
    drafted.map((d, i) => ({ d, record: stored[i]! })),
    async ({ d, record }) => {
      try {
        const current = d.resolved.some(stale) ? await writing(b.fam, () => reconcile(b.fam, ctx.accountId, record, d.resolved, actorOf(ctx))) : record;
        d.slot.result = { index: d.slot.index, ok: true, action: 'created', record: toApi(b.fam, current) };
      } catch (error) {
        d.slot.result = failure(b, d.slot.index, error);
      }
    },
  );
}

/** The single update per item (optimistic locking, rules, events), concurrently, with the batch's preloaded reads. */
async function updateAll(b: Batch, ctx: OperationContext, items: Array<{ slot: Slot; body: ParsedBody }>, pre: Preloaded): Promise<void> {
  const done: Array<{ slot: Slot; stored: StoredRecord; changed: boolean }> = [];
  await eachConcurrently(items, async ({ slot, body }) => {
    try {
      done.push({ slot, ...(await applyUpdate(b.fam, ctx, body, pre)) });
    } catch (error) {
      slot.result = failure(b, slot.index, error);
    }
  });
  if (done.length === 0) return;
  const meta = await readMeta(ctx.accountId);
  for (const d of done) d.slot.result = { index: d.slot.index, ok: true, action: d.changed ? 'updated' : 'unchanged', record: toApi(b.fam, d.stored, meta) };
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

async function batchCreate(b: Batch, ctx: OperationContext, items: readonly unknown[]): Promise<BatchResults<Rec>> {
  const { def } = b;
  const slots = slotsFor(items);
  const parsed = parseEach(b, slots, items, (item) => parseRecordBody(def, item, 'create'));
  await createAll(b, ctx, parsed, await preload(b, ctx, parsed.map((p) => p.body)));
  return finish(slots);
}

async function batchUpdate(b: Batch, ctx: OperationContext, items: readonly unknown[]): Promise<BatchResults<Rec>> {
  const { def } = b;
  const slots = slotsFor(items);
  const seen = new Set<string>();
  const parsed = parseEach(b, slots, items, (item) => {
    const id = typeof item.id === 'string' && isUuid(item.id) ? item.id.toLowerCase() : undefined;
    if (id !== undefined && seen.has(id)) throw duplicate(b, `id ${id}`);
    if (id !== undefined) seen.add(id);
    return parseRecordBody(def, item, 'update');
  });
  await updateAll(b, ctx, parsed, await preload(b, ctx, parsed.map((p) => p.body)));
  return finish(slots);
}

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

/**
 * Upsert by the definition's lookup field (contract §13, as an upsert import): the most recently
 * created record with the same key (without case) is updated with the item's fields (the stored
 * spelling of the key stays), otherwise a record is created.
 */
async function batchUpsert(b: Batch, ctx: OperationContext, items: readonly unknown[]): Promise<BatchResults<Rec>> {
  const { def, family } = b;
  const lookup = def.lookup;
  if (!lookup) throw invalidRequest(family, `${family} have no upsert key`);
  const slots = slotsFor(items);
  const keyed: Array<{ slot: Slot; item: Record<string, unknown>; key: string }> = [];
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
      keyed.push({ slot: slots[i]!, item, key });
    } catch (error) {
      slots[i]!.result = failure(b, i, error);
    }
  });
  const matches = keyed.length ? await recordsByLookup(ctx.accountId, def.type as 'contact' | 'company', lookup.index, keyed.map((k) => k.key)) : new Map<string, StoredRecord[]>();
  const creates: Array<{ slot: Slot; body: ParsedBody }> = [];
  const updates: Array<{ slot: Slot; body: ParsedBody }> = [];
  for (const { slot, item, key } of keyed) {
    try {
      const match = [...(matches.get(key) ?? [])].sort(newestFirst)[0];
      if (!match) {
        creates.push({ slot, body: parseRecordBody(def, item, 'create') });
        continue;
      }
      const body: Record<string, unknown> = { ...item, id: match.id };
      if (normalizeLookupKey(String(match[lookup.field] ?? '').trim()) === key) delete body[lookup.field];
      updates.push({ slot, body: parseRecordBody(def, body, 'update') });
    } catch (error) {
      slot.result = failure(b, slot.index, error);
    }
  }
  const pre = await preload(b, ctx, [...creates, ...updates].map((p) => p.body));
  await Promise.all([createAll(b, ctx, creates, pre), updateAll(b, ctx, updates, pre)]);
  return finish(slots);
}

/**
 * An import chunk (contract §10) through the batch path, so imports share the single
 * operations' validation, rules, reference checks and writes: `creates` as `-batch-create`, with
 * the ids and the creation time the worker derives from its rows (a chunk applied again after a
 * crash writes the same items, and records that exist already are kept); `updates` as
 * `-batch-update`. Results in the order given: the creates, then the updates.
 */
async function applyChunk(b: Batch, ctx: OperationContext, creates: ReadonlyArray<{ id: string; body: ParsedBody }>, updates: readonly ParsedBody[], createdAt: string): Promise<ItemResult<Rec>[]> {
  const slots = slotsFor([...creates, ...updates]);
  const pre = await preload(b, ctx, [...creates.map((c) => c.body), ...updates]);
  await Promise.all([
    createAll(b, ctx, creates.map((c, i) => ({ slot: slots[i]!, body: c.body, id: c.id, now: createdAt })), pre, { skipExisting: true }),
    updateAll(b, ctx, updates.map((body, i) => ({ slot: slots[creates.length + i]!, body })), pre),
  ]);
  return slots.map((s) => s.result!);
}

const batches = new WeakMap<object, Batch>();
function batchOf(entity: Entity): Batch {
  let b = batches.get(entity);
  if (!b) {
    const def = entity as EntityDefinition;
    batches.set(entity, (b = { def, family: def.family as Family, fam: familyOf(def), cfField: customField(def), refs: refFields(def) }));
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
    applyChunk: (ctx: OperationContext, creates: ReadonlyArray<{ id: string; body: ParsedBody }>, updates: readonly ParsedBody[], createdAt: string) => applyChunk(b, ctx, creates, updates, createdAt),
  };
}

