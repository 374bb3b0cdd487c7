/**
 * The API description of the batch operations (contract §13), derived from the entity list like
 * the CRUD docs: one input schema per batch and results typed by family (`ContactBatchResults`
 * carries `Contact` records). See operations.ts for the shape of an entry.
 */
import * as v from 'valibot';
import { MAX_BATCH_ITEMS } from '../schemas/batch.js';
import {
  createSchema,
  ENTITIES,
  type Entity,
  type EntityDefinition,
  recordSchema,
  refFields,
  updateSchema,
  type CreateInputOf,
  type InputOf,
  type RecordOf,
} from '../schemas/entities/index.js';
import type { OperationDoc } from './doc-types.js';
import { errorCodesFor } from './errors.js';

const pascal = (s: string) => s.replace(/(^|[-_])(\w)/g, (_m, _d, c: string) => c.toUpperCase());
const list = <S extends v.GenericSchema>(item: S, what: string) =>
  v.pipe(v.array(item), v.minLength(1), v.maxLength(MAX_BATCH_ITEMS), v.metadata({ description: `1 to ${MAX_BATCH_ITEMS} ${what}; otherwise the whole call is \`<family>.invalid_request\` and nothing is applied` }));

export const batchIdsInput = v.strictObject({
  ids: list(v.pipe(v.string(), v.uuid('must be a UUID'), v.metadata({ examples: ['4f1c1b4e-8a8e-4c55-9a43-3b0f5d6a7e21'] })), 'record ids'),
});

const index = v.pipe(v.number(), v.integer(), v.minValue(0), v.metadata({ description: 'Position of the item in the request' }));

/** The codes an item of a family's batch can fail with: those of its single operations, and duplicate_in_batch. */
function itemCodes(def: EntityDefinition): string[] {
  const f = def.family;
  const extra = refFields(def).map((r) => r.code);
  const single = ['create', 'update', 'delete'].flatMap((verb) => errorCodesFor({ name: `${f}-${verb}`, family: f as never }, { paginated: false, extra }));
  return [...new Set([...single.filter((c) => c.startsWith(`${f}.`)), `${f}.duplicate_in_batch`])];
}

function itemResult(def: EntityDefinition) {
  const codes = itemCodes(def);
  return v.union([
    v.strictObject({
      index,
      ok: v.literal(true),
      action: v.pipe(v.picklist(['created', 'updated', 'unchanged', 'deleted']), v.metadata({ description: '`unchanged`: an update or upsert match that already held every value sent (nothing written, no event)' })),
      record: v.optional(v.pipe(recordSchema(def), v.metadata({ description: 'The record as the single operation returns it (absent on delete)' }))),
    }),
    v.strictObject({
      index,
      ok: v.literal(false),
      error: v.strictObject({
        code: v.pipe(v.string(), v.metadata({ description: `The code the single operation would give, or \`${def.family}.duplicate_in_batch\`: ${codes.map((c) => `\`${c}\``).join(', ')}`, examples: [codes[0]] })),
        message: v.string(),
        details: v.optional(v.array(v.strictObject({ path: v.string(), message: v.string() }))),
      }),
    }),
  ]);
}

/** Components of every entity's batches: `ContactBatchCreateInput`, `ContactBatchResults`, … */
const components = (e: Entity): Array<[string, v.GenericSchema]> => {
  const def = e as unknown as EntityDefinition;
  const name = pascal(def.type);
  const out: Array<[string, v.GenericSchema]> = [
    [`${name}BatchCreateInput`, batchCreateInput(def)],
    [`${name}BatchUpdateInput`, batchUpdateInput(def)],
    [`${name}BatchResults`, batchResults(def)],
    [`${name}BatchGetResult`, batchGetResult(def)],
  ];
  if (def.lookup) out.push([`${name}BatchUpsertInput`, batchUpsertInput(def)]);
  return out;
};

const memo = new WeakMap<object, Map<string, v.GenericSchema>>();
const once = <S extends v.GenericSchema>(def: EntityDefinition, key: string, build: () => S): S => {
  let m = memo.get(def);
  if (!m) memo.set(def, (m = new Map()));
  if (!m.has(key)) m.set(key, build());
  return m.get(key) as S;
};
const batchCreateInput = (def: EntityDefinition) => once(def, 'create', () => v.strictObject({ items: list(createSchema(def), `create bodies, as \`${def.family}-create\` takes them`) }));
const batchUpdateInput = (def: EntityDefinition) => once(def, 'update', () => v.strictObject({ items: list(updateSchema(def), `update bodies (\`id\` and the fields to change), as \`${def.family}-update\` takes them`) }));
const batchUpsertInput = (def: EntityDefinition) =>
  once(def, 'upsert', () => {
    const key = def.lookup!.field;
    const entries = createSchema(def).entries as v.ObjectEntries;
    const item = v.strictObject({ ...Object.fromEntries(Object.entries(entries).map(([k, s]) => [k, k === key ? s : v.optional(s)])) });
    return v.strictObject({ items: list(item, `create bodies with \`${key}\` (the key matched without case)`) });
  });
const batchResults = (def: EntityDefinition) => once(def, 'results', () => v.strictObject({ results: v.pipe(v.array(itemResult(def)), v.metadata({ description: 'One result per item, in input order' })) }));
const batchGetResult = (def: EntityDefinition) =>
  once(def, 'get', () =>
    v.strictObject({
      items: v.pipe(v.array(recordSchema(def)), v.metadata({ description: 'The records found, in input order (an id given twice is answered once)' })),
      not_found: v.pipe(v.array(v.string()), v.metadata({ description: 'Ids that are not records of the account, in input order' })),
    }),
  );

export const batchComponentSchemas: Record<string, v.GenericSchema> = Object.fromEntries([...ENTITIES.flatMap(components), ['BatchIdsInput', batchIdsInput]]);

type Doc<I, R> = OperationDoc & { input: v.GenericSchema<I>; result: v.GenericSchema<unknown, R> };
type ItemResultOf<D extends Entity> =
  | { index: number; ok: true; action: 'created' | 'updated' | 'unchanged' | 'deleted'; record?: RecordOf<D> }
  | { index: number; ok: false; error: { code: string; message: string; details?: { path: string; message: string }[] } };
type Results<D extends Entity> = { results: ItemResultOf<D>[] };
type FieldOf<L> = L extends { field: infer K extends string } ? K : never;
type LookupField<D extends Entity> = D extends { lookup?: infer L } ? FieldOf<L> : never;

type BatchDocs<D extends Entity> = { [K in `${D['family']}-batch-create`]: Doc<{ items: CreateInputOf<D>[] }, Results<D>> } & {
  [K in `${D['family']}-batch-update`]: Doc<{ items: (InputOf<D> & { id: string })[] }, Results<D>>;
} & { [K in `${D['family']}-batch-delete`]: Doc<{ ids: string[] }, Results<D>> } & {
  [K in `${D['family']}-batch-get`]: Doc<{ ids: string[] }, { items: RecordOf<D>[]; not_found: string[] }>;
} & ([LookupField<D>] extends [never] ? unknown : { [K in `${D['family']}-batch-upsert`]: Doc<{ items: (InputOf<D> & { [F in LookupField<D>]: string })[] }, Results<D>> });

function batchDocs<D extends Entity>(entity: D): BatchDocs<D> {
  const def = entity as unknown as EntityDefinition;
  const p = def.family;
  const label = def.label;
  const rules =
    'Items are independent: each is checked and applied as its single operation would be, and the valid ones land even when others fail. ' +
    'The answer lists one result per item in input order: `{ index, ok: true, action, record }` or `{ index, ok: false, error }` with the code the single operation would give. ' +
    'Every landed item raises its usual event.';
  const docs: Record<string, OperationDoc> = {
    [`${p}-batch-create`]: {
      summary: `Create 1 to ${MAX_BATCH_ITEMS} ${p} in one call`,
      description: `${rules} Send \`Idempotency-Key\` to make a retry safe.`,
      input: batchCreateInput(def),
      result: batchResults(def),
    },
    [`${p}-batch-update`]: {
      summary: `Update 1 to ${MAX_BATCH_ITEMS} ${p} in one call (partial, as \`${p}-update\`)`,
      description: `${rules} An id that occurs again later in the call is \`${p}.duplicate_in_batch\` on the later item; \`action\` is \`unchanged\` when the ${label} already held every value sent.`,
      input: batchUpdateInput(def),
      result: batchResults(def),
    },
    [`${p}-batch-delete`]: {
      summary: `Delete 1 to ${MAX_BATCH_ITEMS} ${p} in one call`,
      description: `${rules} An id given twice is \`${p}.duplicate_in_batch\` on the later item.`,
      input: batchIdsInput,
      result: batchResults(def),
    },
    [`${p}-batch-get`]: {
      summary: `Get 1 to ${MAX_BATCH_ITEMS} ${p} by id in one call`,
      description: `Answers \`{ items, not_found }\`: the records in input order, and the ids that are not ${p} of the account. An id that is not a UUID is \`${p}.invalid_id\` for the whole call.`,
      input: batchIdsInput,
      result: batchGetResult(def),
      errors: [`${p}.invalid_id`],
    },
  };
  if (def.lookup) {
    docs[`${p}-batch-upsert`] = {
      summary: `Create or update 1 to ${MAX_BATCH_ITEMS} ${p} matched by \`${def.lookup.field}\` (without case)`,
      description:
        `As an upsert import: an item whose \`${def.lookup.field}\` matches a ${label} of the account (several: the most recently created) updates it with the item's fields (the stored spelling of \`${def.lookup.field}\` stays); otherwise a ${label} is created. ` +
        `An item without \`${def.lookup.field}\` is \`${p}.invalid_request\`; a key that occurs again later in the call is \`${p}.duplicate_in_batch\` on the later item. ${rules} Send \`Idempotency-Key\` to make a retry safe.`,
      input: batchUpsertInput(def),
      result: batchResults(def),
    };
  }
  return docs as unknown as BatchDocs<D>;
}

type UnionToIntersection<U> = (U extends unknown ? (k: U) => void : never) extends (k: infer I) => void ? I : never;
type EntityBatchDocs = UnionToIntersection<Entity extends infer E ? (E extends Entity ? BatchDocs<E> : never) : never>;

/** The batch docs of every entity of the entity list, typed per entity (the client's `crm.contacts.batchCreate`). */
export const batchOperationDocs = Object.assign({}, ...ENTITIES.map((e) => batchDocs(e))) as EntityBatchDocs;
