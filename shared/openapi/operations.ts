/**
 * The API description of every operation, in one place: the valibot schema its body is
 * validated with, the schema of its result, a summary, and the error codes it can return
 * besides the ones every operation of its kind returns (see errors.ts).
 *
 * The OpenAPI document (document.ts) and the typed client (client/) are both derived from
 * this table; nothing here is written twice. A registry entry without a line here makes the
 * document generation fail (test/unit/openapi.test.ts).
 */
import * as v from 'valibot';
import { idOnlyInput } from '../schemas/common.js';
import {
  customFieldCreateInput,
  customFieldListInput,
  customFieldSchema,
  customFieldUpdateInput,
} from '../schemas/custom-fields.js';
import {
  createSchema,
  ENTITIES,
  type Entity,
  type EntityDefinition,
  listSchema,
  pageSchema,
  recordSchema,
  refFields,
  updateSchema,
  type CreateInputOf,
  type InputOf,
  type RecordOf,
} from '../schemas/entities/index.js';
import type { OperationDoc } from './doc-types.js';
import { webhookComponentSchemas, webhookOperationDocs } from './webhook-docs.js';
import { inboundComponentSchemas, inboundOperationDocs } from './inbound-docs.js';
import { importComponentSchemas, importOperationDocs } from './import-docs.js';
import { exportComponentSchemas, exportOperationDocs } from './export-docs.js';
import { apiKeyComponentSchemas, apiKeyOperationDocs } from './api-key-docs.js';
import { eventComponentSchemas, eventOperationDocs } from './event-docs.js';
import { batchComponentSchemas, batchOperationDocs } from './batch-docs.js';
import { trashComponentSchemas, trashOperationDocs } from './trash-docs.js';

export type { OperationDoc };

/** Named component schemas: the document refers to these by name wherever they are used. */
export const deletedSchema = v.object({ deleted: v.pipe(v.literal(true), v.metadata({ description: 'Always true on success' })) });
export const customFieldList = v.object({ items: v.array(customFieldSchema) });

const pascal = (s: string) => s.replace(/(^|[-_])(\w)/g, (_m, _d, c: string) => c.toUpperCase());

/** Components of every entity, derived from its definition: `Contact`, `ContactPage`, `ContactCreateInput`, … */
const entityComponents = Object.fromEntries(
  ENTITIES.flatMap((e) => {
    const name = pascal(e.type);
    return [
      [name, recordSchema(e as EntityDefinition)],
      [`${name}Page`, pageSchema(e as EntityDefinition)],
      [`${name}ListInput`, listSchema(e as EntityDefinition)],
      [`${name}CreateInput`, createSchema(e as EntityDefinition)],
      [`${name}UpdateInput`, updateSchema(e as EntityDefinition)],
    ];
  }),
) as Record<string, v.GenericSchema>;

export const componentSchemas: Record<string, v.GenericSchema> = {
  ...entityComponents,
  CustomField: customFieldSchema,
  Deleted: deletedSchema,
  CustomFieldList: customFieldList,
  IdInput: idOnlyInput,
  CustomFieldListInput: customFieldListInput,
  CustomFieldCreateInput: customFieldCreateInput,
  CustomFieldUpdateInput: customFieldUpdateInput,
  ...webhookComponentSchemas,
  ...inboundComponentSchemas,
  ...importComponentSchemas,
  ...exportComponentSchemas,
  ...apiKeyComponentSchemas,
  ...eventComponentSchemas,
  ...batchComponentSchemas,
  ...trashComponentSchemas,
};

type CreateInput<D extends Entity> = CreateInputOf<D>;
type UpdateInput<D extends Entity> = InputOf<D> & { id: string };
type Doc<I, R> = OperationDoc & { input: v.GenericSchema<I>; result: v.GenericSchema<unknown, R> };
type ListInput = { search?: string; cursor?: string; limit?: number } & Record<string, unknown>;

/** The five operations of an entity, described from its definition (typed per entity for the client). */
type CrudDocs<D extends Entity> = { [K in `${D['family']}-list`]: Doc<ListInput, { items: RecordOf<D>[]; next_cursor: string }> } & {
  [K in `${D['family']}-get`]: Doc<{ id: string }, RecordOf<D>>;
} & { [K in `${D['family']}-create`]: Doc<CreateInput<D>, RecordOf<D>> } & { [K in `${D['family']}-update`]: Doc<UpdateInput<D>, RecordOf<D>> } & {
  [K in `${D['family']}-delete`]: Doc<{ id: string }, { deleted: true }>;
};

function crudDocs<D extends Entity>(entity: D): CrudDocs<D> {
  const def = entity as unknown as EntityDefinition;
  const refErrors = refFields(def).map((r) => r.code);
  const label = def.label;
  const article = /^[aeiou]/.test(label) ? 'an' : 'a';
  const p = def.family;
  return {
    [`${p}-list`]: { summary: def.docs.list, description: def.description, input: listSchema(def), result: pageSchema(def) },
    [`${p}-get`]: { summary: `Get ${article} ${label}`, input: idOnlyInput, result: recordSchema(def) },
    [`${p}-create`]: { summary: def.docs.create ?? `Create ${article} ${label}`, description: def.description, input: createSchema(def), result: recordSchema(def), errors: refErrors },
    [`${p}-update`]: { summary: def.docs.update ?? `Update ${article} ${label} (partial: only the fields sent change)`, input: updateSchema(def), result: recordSchema(def), errors: refErrors },
    [`${p}-delete`]: { summary: def.docs.delete ?? `Delete ${article} ${label}`, input: idOnlyInput, result: deletedSchema },
  } as unknown as CrudDocs<D>;
}

type UnionToIntersection<U> = (U extends unknown ? (k: U) => void : never) extends (k: infer I) => void ? I : never;
/** The CRUD docs of every entity of the entity list, typed per entity. */
type EntityDocs = UnionToIntersection<Entity extends infer E ? (E extends Entity ? CrudDocs<E> : never) : never>;
const entityDocs = Object.assign({}, ...ENTITIES.map((e) => crudDocs(e))) as EntityDocs;

export const operationDocs = {
  ...entityDocs,

  'custom-fields-list': { summary: 'List custom field definitions', input: customFieldListInput, result: customFieldList },
  'custom-fields-get': { summary: 'Get a custom field definition', input: idOnlyInput, result: customFieldSchema },
  'custom-fields-create': { summary: 'Define a custom field for contacts, companies or projects', input: customFieldCreateInput, result: customFieldSchema },
  'custom-fields-update': { summary: 'Update a custom field definition (name, description, options)', input: customFieldUpdateInput, result: customFieldSchema },
  'custom-fields-delete': { summary: 'Delete a custom field definition and its values on every record', input: idOnlyInput, result: deletedSchema },

  ...webhookOperationDocs,
  ...inboundOperationDocs,
  ...importOperationDocs,
  ...exportOperationDocs,
  ...apiKeyOperationDocs,
  ...eventOperationDocs,
  ...batchOperationDocs,
  ...trashOperationDocs,
} satisfies Record<string, OperationDoc>;

export type OperationName = keyof typeof operationDocs;

/** Request and result types of every operation, for the client (type-only import). */
export type OperationTypes = {
  [K in OperationName]: {
    input: v.InferInput<(typeof operationDocs)[K]['input']>;
    result: v.InferOutput<(typeof operationDocs)[K]['result']>;
  };
};
