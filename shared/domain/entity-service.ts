/**
 * The domain operations of every record family, derived from its entity definition: create,
 * get, update, delete and list with the contract's rules (references checked against the
 * account, computed names, custom fields, cross-field rules, derived read-only fields, filters
 * and search). A family with nothing special needs nothing but its definition.
 */
import { type AccountMeta, currentRef, readMeta, readRecordWithMeta, setOverrideItem } from '../db/meta.js';
import { batchGetRecords, getRecord, type StoredRecord, type TransactItem as TransactItemOf } from '../db/items.js';
import { createRecord, deleteRecord, deletionItems, type EntityModel, updateRecord, WriteConflict } from '../db/writes.js';
import { type EntityType, indexName } from '../db/table.js';
import { clearOverrideItem, getTrash, mergePut, recordExistsCheck, restoreRecord, trashPut } from '../db/trash.js';
import { ApiError, type Family, notFound } from '../errors.js';
import {
  customField,
  emptyFields,
  ENTITIES,
  type Entity,
  type EntityDefinition,
  recordFields,
  type RecordOf,
  refFields,
  settable,
  tagsField,
} from '../schemas/entities/index.js';
import { isUuid } from '../schemas/primitives.js';
import type { ParsedBody } from '../schemas/record-body.js';
import { matchesQuery, normalize, parseQuery, recordWords } from '../search/tokenize.js';
import { actorOf, type OperationContext } from './context.js';
import type { Actor } from '../schemas/events.js';
import { checkCustomFields, type CustomFieldDefinition, type CustomFieldEntity } from './custom-fields.js';
import { canonicalSearch, page, type Page, searchDrivers, searchIndexNames } from './listing.js';
import { visibleCustomFields } from './shape.js';

type Def = EntityDefinition;
type Ref = ReturnType<typeof refFields>[number];

/** Entity types some other entity shows the current name of (their renames and deletions use meta overrides). */
export const NAMED_TARGETS = new Set<string>(ENTITIES.flatMap((e) => refFields(e as Def).filter((r) => r.nameField).map((r) => r.target)));

/** Fields whose values are indexed for `values`/`bool` list filters. */
const valueFields = (def: Def) => [...new Set(Object.values(def.filters).filter((f) => f.kind === 'values' || f.kind === 'bool').map((f) => f.field))];

/** Which fields of a definition are indexed, worked out once per definition (every write and stream record asks). */
const indexedCache = new WeakMap<Def, { tags: string | undefined; refs: Ref[]; values: string[] }>();
function indexedFields(def: Def) {
  let plan = indexedCache.get(def);
  if (!plan) indexedCache.set(def, (plan = { tags: tagsField(def), refs: refFields(def), values: valueFields(def) }));
  return plan;
}

/** Every word a record is found by, with the current name of its references. */
export const searchWords = (def: Def, record: Record<string, unknown>) => (def.search ? recordWords(def.search(record)) : new Set<string>());

/**
 * The index partitions a record belongs to, written in the record's own transaction: tags,
 * references, exact lookups and enumerated values. Search prefixes are kept apart
 * (`searchNamesOf`): the stream worker writes them after the record (contract §4: search may lag
 * a write by up to 2 s locally), which keeps them off the write's latency and billed at one
 * unit per entry instead of two.
 */
export function indexNamesOf(def: Def, r: Record<string, unknown>): string[] {
  const { tags, refs, values } = indexedFields(def);
  const names: string[] = [];
  if (tags && Array.isArray(r[tags])) names.push(...(r[tags] as string[]).map(indexName.tag));
  for (const ref of refs) {
    const value = r[ref.field];
    const ids = ref.many ? (Array.isArray(value) ? (value as string[]) : []) : typeof value === 'string' ? [value] : [];
    names.push(...ids.map((id) => indexName.ref(ref.target as EntityType, id)));
  }
  if (def.lookup) {
    const value = r[def.lookup.field];
    if (typeof value === 'string' && value.trim() !== '') names.push(indexName[def.lookup.index](normalize(value.trim())));
  }
  for (const field of values) {
    const value = r[field];
    if (value !== undefined && value !== null && value !== '') names.push(indexName.value(field, String(value)));
  }
  return [...new Set(names)];
}

/** The search-prefix partitions of a record (maintained by the stream worker). */
export const searchNamesOf = (def: Def, r: Record<string, unknown>): string[] => (def.search ? searchIndexNames(searchWords(def, r)) : []);

export const modelOf = (def: Def): EntityModel => ({ type: def.type as EntityType, indexNames: (r) => indexNamesOf(def, r) });

/**
 * What a batch (shared/domain/batch.ts) reads once for all its items: the entity type's
 * custom-field definitions and the records its items reference. Absent, each call reads its own.
 */
export interface Preloaded {
  definitions?: readonly CustomFieldDefinition[];
  /** Referenced records by target type, then id: an id missing from a loaded type is not a record of the account. */
  records?: ReadonlyMap<string, ReadonlyMap<string, StoredRecord>>;
}

export interface Resolved {
  field: string;
  target: string;
  /** Ids linked by this write, with the version and name read. */
  linked: Array<{ id: string; ver: number; name: string }>;
}

export function entityService<D extends Entity>(entity: D) {
  const def = entity as unknown as Def;
  const family = def.family as Family;
  const model = modelOf(def);
  const refs = refFields(def);
  const cfField = customField(def);
  const fields = recordFields(def);
  const empty = emptyFields(def);
  const named = NAMED_TARGETS.has(def.type);
  type Rec = RecordOf<D>;

  /** The API view: every field, computed names current (meta overrides), hidden deleted custom fields. */
  function toApi(item: Record<string, unknown>, meta?: AccountMeta): Rec {
    const out: Record<string, unknown> = {};
    for (const f of fields) out[f] = item[f] !== undefined ? item[f] : f in empty ? structuredClone(empty[f]) : '';
    if (meta) {
      for (const ref of refs) {
        if (ref.many) continue;
        const current = currentRef(meta, ref.target as EntityType, item[ref.field], ref.nameField ? item[ref.nameField] : '');
        out[ref.field] = current.id;
        if (ref.nameField) out[ref.nameField] = current.name;
      }
    }
    if (cfField) out[cfField] = visibleCustomFields(item[cfField], meta);
    return out as Rec;
  }

  const invalidRef = (ref: Ref, detail: string) => new ApiError(ref.code, `${ref.field} does not reference an existing ${ref.target} of this account`, [{ path: ref.field, message: detail }]);

  /** Checks the sent references against the account; returns the stored values and what was linked. */
  async function resolveRefs(accountId: string, sent: Record<string, unknown>, pre?: Preloaded): Promise<{ set: Record<string, unknown>; resolved: Resolved[] }> {
    const set: Record<string, unknown> = {};
    const resolved: Resolved[] = [];
    const preloaded = (target: string, ids: string[]) => {
      const known = pre?.records?.get(target);
      return known && new Map(ids.flatMap((id) => (known.has(id) ? [[id, known.get(id)!] as const] : [])));
    };
    await Promise.all(
      refs.map(async (ref) => {
        if (!(ref.field in sent)) return;
        const value = sent[ref.field];
        if (ref.many) {
          const ids = (value as string[] | undefined) ?? [];
          const bad = ids.find((id) => !isUuid(id));
          if (bad !== undefined) throw new ApiError(ref.code, `${ref.field} must be an array of UUIDs: ${JSON.stringify(String(bad).slice(0, 64))} is not a UUID`, [{ path: ref.field, message: 'every id must be a UUID' }]);
          const found = ids.length ? (preloaded(ref.target, ids) ?? (await batchGetRecords(ref.target as EntityType, accountId, ids))) : new Map<string, StoredRecord>();
          const missing = ids.filter((id) => !found.has(id));
          if (missing.length) throw invalidRef(ref, `no such ${ref.target}: ${missing.join(', ')}`);
          set[ref.field] = ids;
          resolved.push({ field: ref.field, target: ref.target, linked: ids.map((id) => ({ id, ver: found.get(id)!.ver, name: String(found.get(id)!.name ?? '') })) });
          return;
        }
        if (value === null || value === undefined) {
          set[ref.field] = null;
          if (ref.nameField) set[ref.nameField] = '';
          return;
        }
        const id = String(value).toLowerCase();
        if (!isUuid(id)) throw new ApiError(ref.code, `${ref.field} must be a UUID or null: ${JSON.stringify(String(value).slice(0, 64))} is not a UUID`, [{ path: ref.field, message: 'is not a UUID' }]);
        const known = preloaded(ref.target, [id]);
        const record = known ? known.get(id) : await getRecord(ref.target as EntityType, accountId, id);
        if (!record) throw invalidRef(ref, `no such ${ref.target}`);
        set[ref.field] = record.id;
        if (ref.nameField) set[ref.nameField] = String(record.name ?? '');
        resolved.push({ field: ref.field, target: ref.target, linked: [{ id: record.id, ver: record.ver, name: String(record.name ?? '') }] });
      }),
    );
    return { set, resolved };
  }

  /**
   * After a write that linked records read at some version: if one was renamed or deleted
   * meanwhile, its fan-out may have run before this record was visible, so bring the record up
   * to date here. Whichever of the two runs last sees both writes.
   */
  async function reconcile(accountId: string, record: StoredRecord, resolved: Resolved[], actor: Actor): Promise<StoredRecord> {
    let current = record;
    for (const r of resolved) {
      const ref = refs.find((x) => x.field === r.field)!;
      const now = await batchGetRecords(r.target as EntityType, accountId, r.linked.map((l) => l.id));
      const stale = r.linked.filter((l) => now.get(l.id)?.ver !== l.ver);
      if (stale.length === 0) continue;
      current =
        (await updateRecord(model, {
          accountId,
          id: record.id,
          actor,
          compute: (c) => {
            if (ref.many) {
              const ids = (c[ref.field] as string[]) ?? [];
              const kept = ids.filter((id) => !stale.some((s) => s.id === id) || now.has(id));
              return kept.length === ids.length ? undefined : { set: { [ref.field]: kept } };
            }
            const target = now.get(r.linked[0]!.id);
            if (c[ref.field] !== r.linked[0]!.id) return undefined;
            if (!target) return { set: { [ref.field]: null, ...(ref.nameField ? { [ref.nameField]: '' } : {}) } };
            return ref.nameField ? { set: { [ref.nameField]: target.name } } : undefined;
          },
        })) ?? current;
    }
    return current;
  }

  function checkRules(next: Record<string, unknown>, sent: string[]) {
    const violations = def.rules?.(next, sent) ?? [];
    if (violations.length) {
      const first = violations[0]!;
      throw new ApiError(`${family}.${first.code}`, first.message, violations.map((x) => ({ path: x.path, message: x.message })));
    }
  }

  /** A lost optimistic-locking race beyond every retry is a conflict, never an internal error. */
  async function writing<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (error) {
      if (error instanceof WriteConflict) throw new ApiError(`${family}.conflict`, `the ${def.label} is being changed by other requests; retry`, undefined, { cause: error });
      throw error;
    }
  }

  /** A new record's fields (custom fields and references checked, rules, derived fields): everything of a create but the write. */
  async function draftOf(ctx: OperationContext, { fields: sent }: ParsedBody, opts: { readOnly?: Record<string, unknown> } = {}, pre?: Preloaded) {
    const now = new Date().toISOString();
    const { [cfField ?? '']: cfInput, ...rest } = sent as Record<string, unknown>;
    const [cf, refsOut] = await Promise.all([
      cfField ? checkCustomFields(family, ctx.accountId, def.type as CustomFieldEntity, (cfInput ?? {}) as Record<string, unknown>, pre?.definitions) : undefined,
      resolveRefs(ctx.accountId, rest, pre),
    ]);
    const draft: Record<string, unknown> = { ...structuredClone(empty), ...rest, ...refsOut.set, ...(cfField ? { [cfField]: cf!.set } : {}), ...opts.readOnly };
    checkRules(draft, Object.keys(sent));
    Object.assign(draft, def.derive?.(draft, undefined, now) ?? {});
    return { draft, resolved: refsOut.resolved, now };
  }

  async function create(ctx: OperationContext, body: ParsedBody, opts: { readOnly?: Record<string, unknown> } = {}): Promise<Rec> {
    const { draft, resolved, now } = await draftOf(ctx, body, opts);
    // A conflict beyond the data layer's retries is the contract's 409, never a 500.
    const record = await writing(() => createRecord(model, { accountId: ctx.accountId, userId: ctx.userId, fields: draft, now, actor: actorOf(ctx) }));
    return toApi(await writing(() => reconcile(ctx.accountId, record, resolved, actorOf(ctx))));
  }

  async function get(ctx: OperationContext, id: string): Promise<Rec> {
    const { record, meta } = await readRecordWithMeta(def.type as EntityType, ctx.accountId, id);
    if (!record) throw notFound(family, def.label);
    return toApi(record, meta);
  }

  async function update(ctx: OperationContext, body: ParsedBody): Promise<Rec> {
    const { stored } = await applyUpdate(ctx, body);
    return toApi(stored, await readMeta(ctx.accountId));
  }

  /** An update up to the stored record (the API view needs the account's meta); `changed`: false when nothing had to be written. */
  async function applyUpdate(
    ctx: OperationContext,
    { id, fields: sent }: ParsedBody,
    pre?: Preloaded,
    /** More of the same transaction (a merge deletes its secondary with the primary's update): `load` runs on every attempt. */
    also?: { load: () => Promise<void>; items: (current: StoredRecord, next: StoredRecord) => TransactItemOf[] },
  ): Promise<{ stored: StoredRecord; changed: boolean }> {
    const { [cfField ?? '']: cfInput, ...rest } = sent as Record<string, unknown>;
    const cf = cfField && cfInput ? await checkCustomFields(family, ctx.accountId, def.type as CustomFieldEntity, cfInput as Record<string, unknown>, pre?.definitions) : undefined;
    let resolved: Resolved[] = [];
    let readVer = 0;
    const updated = await writing(() =>
      updateRecord(model, {
        accountId: ctx.accountId,
        id: id!,
        actor: actorOf(ctx),
        compute: async (current) => {
          readVer = current.ver;
          await also?.load();
          const changedRefs = Object.fromEntries(Object.entries(rest).filter(([k]) => refs.some((r) => r.field === k)));
          const out = await resolveRefs(ctx.accountId, changedRefs, pre);
          resolved = out.resolved;
          const set = { ...rest, ...out.set };
          const next = { ...current, ...set };
          checkRules(next, Object.keys(sent));
          Object.assign(set, def.derive?.(next, current, new Date().toISOString()) ?? {});
          return { set, customSet: cf?.set, customRemove: cf?.remove };
        },
        // A rename shows on every referencing record at once (meta override) while the stream
        // worker rewrites their stored names and search entries.
        extra: (current, next) => [
          ...(named && next.name !== current.name ? [setOverrideItem(ctx.accountId, def.type as EntityType, id!, String(next.name), next.ver)] : []),
          ...(also?.items(current, next) ?? []),
        ],
      }),
    );
    if (!updated) throw notFound(family, def.label);
    const stored = await writing(() => reconcile(ctx.accountId, updated, resolved, actorOf(ctx)));
    return { stored, changed: updated.ver !== readVer };
  }

  /**
   * Deletes a record: its `*.deleted` event and cascades follow from the stream as always; a
   * family with a trash (contract §15) keeps the record's last image in the trash item, written in
   * the same transaction (`mergedInto`: the deletion is the secondary's side of a merge).
   */
  async function trashOrDelete(ctx: OperationContext, id: string, more?: (current: StoredRecord) => TransactItemOf[], mergedInto?: { id: string; name: string }): Promise<StoredRecord | undefined> {
    return writing(() =>
      deleteRecord(
        model,
        ctx.accountId,
        id,
        (current) => [
          // Reads stop showing a deleted record's name at once; a merged one shows as its primary.
          ...(named ? [setOverrideItem(ctx.accountId, def.type as EntityType, id, mergedInto ? mergedInto.name : null, current.ver + 1, mergedInto?.id)] : []),
          ...(def.trash ? [trashPut(ctx.accountId, def.type as EntityType, current, new Date().toISOString(), mergedInto?.id)] : []),
          ...(more?.(current) ?? []),
        ],
        actorOf(ctx),
      ),
    );
  }

  async function remove(ctx: OperationContext, id: string): Promise<{ deleted: true }> {
    const old = await trashOrDelete(ctx, id);
    if (!old) throw notFound(family, def.label);
    return { deleted: true };
  }

  // --- trash, restore and merge (contract §15) ---

  /**
   * Brings a trashed record back: same id, fields and `created_at`, its own links where the
   * linked record still exists (others dropped, names current). The stream worker then undoes
   * the deletion's cascades where nothing changed them since (shared/stream/restore.ts).
   */
  async function restore(ctx: OperationContext, id: string): Promise<Rec> {
    const trashed = def.trash ? await getTrash(ctx.accountId, def.type as EntityType, id) : undefined;
    if (!trashed) throw notFound(family, def.label);
    const stored = trashed.record as Record<string, unknown>;
    const set: Record<string, unknown> = {};
    const resolved: Resolved[] = [];
    await Promise.all(
      refs.map(async (ref) => {
        const value = stored[ref.field];
        if (ref.many) {
          const ids = Array.isArray(value) ? (value as string[]) : [];
          const found = ids.length ? await batchGetRecords(ref.target as EntityType, ctx.accountId, ids) : new Map<string, StoredRecord>();
          const kept = ids.filter((x) => found.has(x));
          set[ref.field] = kept;
          if (kept.length) resolved.push({ field: ref.field, target: ref.target, linked: kept.map((x) => ({ id: x, ver: found.get(x)!.ver, name: String(found.get(x)!.name ?? '') })) });
          return;
        }
        if (typeof value !== 'string' || value === '') return;
        const target = await getRecord(ref.target as EntityType, ctx.accountId, value);
        if (!target) {
          set[ref.field] = null;
          if (ref.nameField) set[ref.nameField] = '';
          return;
        }
        if (ref.nameField) set[ref.nameField] = String(target.name ?? '');
        resolved.push({ field: ref.field, target: ref.target, linked: [{ id: value, ver: target.ver, name: String(target.name ?? '') }] });
      }),
    );
    const extra = named ? [clearOverrideItem(ctx.accountId, def.type as EntityType, id)] : [];
    const record = await restoreRecord(model, ctx.accountId, trashed, set, new Date().toISOString(), actorOf(ctx), extra);
    if (!record) throw notFound(family, def.label);
    const current = await writing(() => reconcile(ctx.accountId, record, resolved, actorOf(ctx)));
    return toApi(current, await readMeta(ctx.accountId));
  }

  /**
   * Merges a duplicate (`secondary`) into `primary`: the primary keeps its non-empty fields and
   * takes the secondary's where its own are empty, tags are the union (primary's first),
   * custom fields merge by key (primary wins); then the secondary goes to the trash with a merge
   * item, whose stream records re-point the secondary's links in bounded chunks
   * (shared/stream/merge.ts). Answers the primary.
   */
  async function merge(ctx: OperationContext, primaryId: string, secondaryId: string): Promise<Rec> {
    if (!def.merge) throw notFound(family, def.label);
    if (primaryId === secondaryId) throw new ApiError(`${family}.invalid_request`, 'primary_id and secondary_id must be different records', [{ path: 'secondary_id', message: 'is the same as primary_id' }]);
    const [p, s] = await Promise.all([readRecordWithMeta(def.type as EntityType, ctx.accountId, primaryId), readRecordWithMeta(def.type as EntityType, ctx.accountId, secondaryId)]);
    if (!p.record || !s.record) throw new ApiError(`${family}.not_found`, `${def.label} not found: ${!p.record ? 'primary_id' : 'secondary_id'}`);
    const primary = toApi(p.record, p.meta) as Record<string, unknown>;
    const secondary = toApi(s.record, s.meta) as Record<string, unknown>;
    const tags = tagsField(def);
    const isEmpty = (x: unknown) => x === null || x === undefined || x === '' || (Array.isArray(x) && x.length === 0) || (typeof x === 'object' && !Array.isArray(x) && Object.keys(x as object).length === 0);
    const sent: Record<string, unknown> = {};
    for (const field of settable(def, 'update')) {
      if (field === tags) {
        const union = [...new Set([...((primary[field] as string[]) ?? []), ...((secondary[field] as string[]) ?? [])])].slice(0, 50);
        if (union.length !== (primary[field] as string[]).length) sent[field] = union;
      } else if (field === cfField) {
        const mine = (primary[field] ?? {}) as Record<string, unknown>;
        const theirs = Object.fromEntries(Object.entries((secondary[field] ?? {}) as Record<string, unknown>).filter(([k]) => !(k in mine)));
        if (Object.keys(theirs).length) sent[field] = theirs;
      } else if (isEmpty(primary[field]) && !isEmpty(secondary[field])) {
        sent[field] = secondary[field];
      }
    }
    // One transaction when the primary changes: its update, the secondary's deletion with its
    // trash item, and the merge item (re-read on every attempt of the optimistic write).
    const type = def.type as EntityType;
    const missing = () => new ApiError(`${family}.not_found`, `${def.label} not found: secondary_id`);
    let second: StoredRecord | undefined;
    const secondaryItems = (sec: StoredRecord, primaryNext: StoredRecord) => [
      ...(named ? [setOverrideItem(ctx.accountId, type, secondaryId, String(primaryNext.name ?? ''), sec.ver + 1, primaryId)] : []),
      trashPut(ctx.accountId, type, sec, new Date().toISOString(), primaryId),
      mergePut(ctx.accountId, type, sec, primaryNext, actorOf(ctx)),
    ];
    const { stored, changed } = await applyUpdate(ctx, { id: primaryId, fields: sent }, undefined, {
      load: async () => {
        second = await getRecord(type, ctx.accountId, secondaryId);
        if (!second) throw missing();
      },
      items: (_current, next) => deletionItems(model, ctx.accountId, second!, secondaryItems(second!, next), actorOf(ctx)),
    });
    if (!changed) {
      // Nothing to take from the secondary: its deletion alone, guarded by the primary's existence.
      const old = await trashOrDelete(ctx, secondaryId, (current) => [mergePut(ctx.accountId, type, current, stored, actorOf(ctx)), recordExistsCheck(ctx.accountId, type, primaryId)], { id: primaryId, name: String(stored.name ?? '') });
      if (!old) throw missing();
    }
    return toApi(stored, await readMeta(ctx.accountId));
  }
  // --- end trash ---

  async function list(ctx: OperationContext, input: Record<string, unknown>): Promise<Page<Rec>> {
    const query = def.search ? parseQuery(input.search as string | undefined, { exactEmail: def.exactEmailSearch }) : undefined;
    if (query && query.words.length === 0 && !query.phoneDigits && query.email === undefined) return { items: [], next_cursor: '' };

    // Filters on the same record field are OR-ed (company_id + company_ids), different fields AND-ed.
    const groups = new Map<string, { kind: string; values: unknown[] }>();
    let tags: string[] = [];
    for (const [name, filter] of Object.entries(def.filters)) {
      const value = input[name];
      if (value === undefined) continue;
      if (filter.kind === 'tags') {
        tags = [...new Set(value as string[])];
        continue;
      }
      const values = filter.kind === 'bool' || filter.kind === 'ref' ? [value] : [...new Set(value as unknown[])];
      if (values.length === 0) continue;
      const g = groups.get(filter.field) ?? { kind: filter.kind === 'refs' ? 'ref' : filter.kind, values: [] };
      g.values = [...new Set([...g.values, ...values])];
      groups.set(filter.field, g);
    }
    const canonical = {
      ...(def.search ? { search: canonicalSearch(input.search as string | undefined) } : {}),
      tags: [...tags].sort(),
      ...Object.fromEntries([...groups].map(([field, g]) => [field, g.values.map(String).sort()])),
    };

    const drivers: string[][] = [...(query ? searchDrivers(query) : []), ...tags.map((t) => [indexName.tag(t)])];
    for (const [field, g] of groups) {
      const ref = refs.find((r) => r.field === field);
      drivers.push(ref ? g.values.map((id) => indexName.ref(ref.target as EntityType, String(id))) : g.values.map((val) => indexName.value(field, String(val))));
    }

    let meta!: AccountMeta;
    const ready = readMeta(ctx.accountId).then((m) => (meta = m));
    const tagField = tagsField(def);
    const filtered = Boolean(query || tags.length || groups.size);
    // Each candidate is shaped once: the re-check and the page use the same view.
    const views = new WeakMap<StoredRecord, Rec>();
    const viewOf = (r: StoredRecord): Rec => {
      let v = views.get(r);
      if (!v) views.set(r, (v = toApi(r, meta)));
      return v;
    };
    const matches = (r: StoredRecord) => {
      const view = viewOf(r) as Record<string, unknown>;
      if (tagField && !tags.every((t) => (view[tagField] as string[]).includes(t))) return false;
      for (const [field, g] of groups) {
        const v = view[field];
        if (Array.isArray(v) ? !g.values.some((x) => v.includes(x)) : !g.values.includes(v)) return false;
      }
      return !query || matchesQuery(searchWords(def, view), query, def.lookup?.index === 'email' ? String(r[def.lookup.field] ?? '') : undefined);
    };
    return page(
      ctx,
      { type: def.type as EntityType, family, cursor: input.cursor as string | undefined, limit: input.limit as number | undefined, filters: canonical, drivers, matches: filtered ? matches : undefined, ready },
      viewOf,
    );
  }

  return { definition: entity, model, toApi, create, get, update, delete: remove, restore, merge, list, draftOf, applyUpdate, reconcile, writing };
}

export type EntityService<D extends Entity = Entity> = ReturnType<typeof entityService<D>>;
