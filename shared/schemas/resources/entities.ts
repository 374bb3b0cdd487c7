/**
 * The operations of every record family (contacts, companies, lead sources, projects,
 * activities), derived from its entity definition: the five CRUD operations, the batches
 * (contract §13: `-batch-upsert` when it has a `lookup`), `-restore` (`trash: true`) and `-merge`
 * (`merge: true`). Their access and idempotency: entity-operations.ts. Their handlers are one line
 * each, built from those entries (shared/http/records.ts).
 */
import * as v from 'valibot';
import { MAX_BATCH_ITEMS } from '../batch.js';
import { idOnlyInput } from '../common.js';
import {
  createSchema,
  type Entity,
  type EntityDefinition,
  listSchema,
  pageSchema,
  recordSchema,
  refFields,
  updateSchema,
} from '../entities/index.js';
import { errorCodesFor } from '../error-codes.js';
import { filterSchemas } from '../filter.js';
import { defineResource, type OperationDecl, type ResourceDefinition } from '../resource.js';
import { mergeInput } from '../trash.js';
import { stageHistoryOperation } from '../pipelines.js';
import { activitiesSummaryOperation, companiesSummaryOperation, contactsSummaryOperation } from '../count-summaries.js';
import { projectsSummaryOperation } from '../summaries.js';
import { deletedSchema } from './shared.js';
import { ENTITY_OPERATIONS as OPS } from './entity-operations.js';
import { RECORD_INDEX_NAMES, RECORD_KEYS } from '../keys/records.js';

const pascal = (s: string) => s.replace(/(^|[-_])(\w)/g, (_m, _d, c: string) => c.toUpperCase());

const list = <S extends v.GenericSchema>(item: S, what: string) =>
  v.pipe(v.array(item), v.minLength(1), v.maxLength(MAX_BATCH_ITEMS), v.metadata({ description: `1 to ${MAX_BATCH_ITEMS} ${what}; otherwise the whole call is \`<family>.invalid_request\` and nothing is applied` }));

export const batchIdsInput = v.strictObject({
  ids: list(v.pipe(v.string(), v.uuid('must be a UUID'), v.metadata({ examples: ['4f1c1b4e-8a8e-4c55-9a43-3b0f5d6a7e21'] })), 'record ids'),
});

const index = v.pipe(v.number(), v.integer(), v.minValue(0), v.metadata({ description: 'Position of the item in the request' }));

/** The codes of a write that places a record in a pipeline (contract §19). */
const placeErrors = (def: EntityDefinition): string[] => (def.pipeline ? [`${def.family}.invalid_pipeline_id`, `${def.family}.invalid_stage_id`] : []);

/** The codes an item of a family's batch can fail with: those of its single operations, and duplicate_in_batch. */
function itemCodes(def: EntityDefinition): string[] {
  const f = def.family;
  const extra = [...refFields(def).map((r) => r.code), ...placeErrors(def)];
  const single = ['create', 'update', 'delete'].flatMap((verb) => errorCodesFor({ name: `${f}-${verb}`, family: f }, { paginated: false, extra }));
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


/** Components of an entity: `Contact`, `ContactPage`, `ContactCreateInput`, `ContactBatchResults`, … */
function components(def: EntityDefinition): Record<string, v.GenericSchema> {
  const name = pascal(def.type);
  return {
    [name]: recordSchema(def),
    [`${name}Page`]: pageSchema(def),
    [`${name}ListInput`]: listSchema(def),
    [`${name}CreateInput`]: createSchema(def),
    [`${name}UpdateInput`]: updateSchema(def),
    [`${name}BatchCreateInput`]: batchCreateInput(def),
    [`${name}BatchUpdateInput`]: batchUpdateInput(def),
    [`${name}BatchResults`]: batchResults(def),
    [`${name}BatchGetResult`]: batchGetResult(def),
    ...(def.lookup ? { [`${name}BatchUpsertInput`]: batchUpsertInput(def) } : {}),
    BatchIdsInput: batchIdsInput,
    Filter: filterSchemas().filter,
    FilterCondition: filterSchemas().condition,
    Sort: filterSchemas().sort,
  };
}

function crudOperations(def: EntityDefinition): Record<string, OperationDecl> {
  const refErrors = [...refFields(def).map((r) => r.code), ...placeErrors(def)];
  const label = def.label;
  const article = /^[aeiou]/.test(label) ? 'an' : 'a';
  return {
    list: { ...OPS.list, ...(def.search ? { items: { reads: ['searchEntries'] } } : {}), summary: def.docs.list, description: def.description, input: listSchema(def), result: pageSchema(def), errors: [`${def.family}.invalid_filter`, `${def.family}.invalid_sort`, `${def.family}.sort_too_large`, `${def.family}.index_building`] },
    get: { ...OPS.get, summary: `Get ${article} ${label}`, input: idOnlyInput, result: recordSchema(def) },
    create: { ...OPS.create, summary: def.docs.create ?? `Create ${article} ${label}`, description: def.description, input: createSchema(def), result: recordSchema(def), errors: refErrors },
    update: { ...OPS.update, summary: def.docs.update ?? `Update ${article} ${label} (partial: only the fields sent change)`, input: updateSchema(def), result: recordSchema(def), errors: refErrors },
    delete: { ...OPS.delete, summary: def.docs.delete ?? `Delete ${article} ${label}`, input: idOnlyInput, result: deletedSchema },
  };
}

function batchOperations(def: EntityDefinition): Record<string, OperationDecl> {
  const p = def.family;
  const label = def.label;
  const rules =
    'Items are independent: each is checked and applied as its single operation would be, and the valid ones land even when others fail. ' +
    'The answer lists one result per item in input order: `{ index, ok: true, action, record }` or `{ index, ok: false, error }` with the code the single operation would give. ' +
    'Every landed item raises its usual event.';
  const ops: Record<string, OperationDecl> = {
    'batch-create': {
      ...OPS['batch-create'],
      summary: `Create 1 to ${MAX_BATCH_ITEMS} ${p} in one call`,
      description: `${rules} Send \`Idempotency-Key\` to make a retry safe.`,
      input: batchCreateInput(def),
      result: batchResults(def),
    },
    'batch-update': {
      ...OPS['batch-update'],
      summary: `Update 1 to ${MAX_BATCH_ITEMS} ${p} in one call (partial, as \`${p}-update\`)`,
      description: `${rules} An id that occurs again later in the call is \`${p}.duplicate_in_batch\` on the later item; \`action\` is \`unchanged\` when the ${label} already held every value sent.`,
      input: batchUpdateInput(def),
      result: batchResults(def),
    },
    'batch-delete': {
      ...OPS['batch-delete'],
      summary: `Delete 1 to ${MAX_BATCH_ITEMS} ${p} in one call`,
      description: `${rules} An id given twice is \`${p}.duplicate_in_batch\` on the later item.`,
      input: batchIdsInput,
      result: batchResults(def),
    },
    'batch-get': {
      ...OPS['batch-get'],
      summary: `Get 1 to ${MAX_BATCH_ITEMS} ${p} by id in one call`,
      description: `Answers \`{ items, not_found }\`: the records in input order, and the ids that are not ${p} of the account. An id that is not a UUID is \`${p}.invalid_id\` for the whole call.`,
      input: batchIdsInput,
      result: batchGetResult(def),
      errors: [`${p}.invalid_id`],
    },
  };
  if (def.lookup) {
    ops['batch-upsert'] = {
      ...OPS['batch-upsert'],
      summary: `Create or update 1 to ${MAX_BATCH_ITEMS} ${p} matched by \`${def.lookup.field}\` (without case)`,
      description:
        `As an upsert import: an item whose \`${def.lookup.field}\` matches a ${label} of the account (several: the most recently created) updates it with the item's fields (the stored spelling of \`${def.lookup.field}\` stays); otherwise a ${label} is created. ` +
        `An item without \`${def.lookup.field}\` is \`${p}.invalid_request\`; a key that occurs again later in the call is \`${p}.duplicate_in_batch\` on the later item. ${rules} Send \`Idempotency-Key\` to make a retry safe.`,
      input: batchUpsertInput(def),
      result: batchResults(def),
    };
  }
  return ops;
}

function restoreOperation(def: EntityDefinition): OperationDecl {
  const p = def.family;
  return {
    ...OPS.restore,
    summary: `Restore a ${def.label} from the trash`,
    description:
      `Brings a deleted ${def.label} back with its id, fields, \`created_at\` and its own links (a link to a record that is gone is dropped), and undoes its deletion's cascades where nothing changed them since (within seconds: the stream worker re-links them, raising their \`*.updated\` events). Raises \`${def.type}.restored\` (body as \`${def.type}.created\`). ` +
      `Not in the trash (never deleted, restored already, purged after TRASH_RETENTION_DAYS, or another account's): \`${p}.not_found\`.`,
    input: idOnlyInput,
    result: recordSchema(def),
    errors: [`${p}.invalid_id`, `${p}.not_found`],
  };
}

function mergeOperation(def: EntityDefinition): OperationDecl {
  const p = def.family;
  const links = def.type === 'contact' ? "activities' and projects' `contact_ids`, inbound emails' `matched_contact_ids`" : "contacts', projects' and activities' `company_id`";
  return {
    ...OPS.merge,
    summary: `Merge a duplicate ${def.label} into another`,
    description:
      `The primary keeps its non-empty fields and takes the secondary's where its own are empty; \`tags\` are the union (the primary's first); \`custom_fields\` merge by key, the primary's value winning. The secondary goes to the trash (restorable; restoring it does not undo the merge) and its links move to the primary (${links}): ` +
      `the answer comes once the two records are merged, and the links follow within seconds (the stream worker moves them in chunks of a few hundred, resuming after a crash). ` +
      `Events: \`${def.type}.updated\` for the primary (with \`previous_attributes\`), \`${def.type}.deleted\` for the secondary, \`*.updated\` for every re-pointed record, and \`${def.type}.merged\` (\`data\` the primary, \`merged_id\` the secondary's id). ` +
      `The same id twice: \`${p}.invalid_request\`; either missing: \`${p}.not_found\`.`,
    input: mergeInput,
    result: recordSchema(def),
    errors: [`${p}.invalid_id`, `${p}.not_found`, `${p}.conflict`],
  };
}

/** The summary of each family that has one (contract §21; shared/schemas/summaries.ts). */
const SUMMARY_OPERATIONS: Partial<Record<string, OperationDecl>> = { project: projectsSummaryOperation, contact: contactsSummaryOperation, company: companiesSummaryOperation, activity: activitiesSummaryOperation };

function operationsOf(def: EntityDefinition): Record<string, OperationDecl> {
  const ops: Record<string, OperationDecl> = { ...crudOperations(def), ...batchOperations(def) };
  if (def.trash) ops.restore = restoreOperation(def);
  if (def.merge) ops.merge = mergeOperation(def);
  if (def.pipeline) ops['stage-history'] = stageHistoryOperation;
  const summary = SUMMARY_OPERATIONS[def.type];
  if (summary) ops.summary = summary;
  return ops;
}

/** The resource of a record family, derived from its entity definition. */
export function entityResource(entity: Entity): ResourceDefinition {
  const def = entity as EntityDefinition;
  return defineResource({
    family: entity.family,
    prefix: entity.family,
    keys: RECORD_KEYS,
    indexes: RECORD_INDEX_NAMES,
    components: components(def),
    operations: operationsOf(def),
  });
}
