import { apiShape } from '../schemas/resource.js';
import { randomUUID } from 'node:crypto';
import * as v from 'valibot';
import { deleteDefinitionItem, getDefinitionItem, listDefinitionItems, putDefinitionItem, updateDefinitionItem } from '../db/custom-fields.js';
import { newestFirst } from '../db/items.js';
import { ApiError, type ErrorDetail, type Family, invalidRequest, notFound } from '../errors.js';
import type { OperationContext } from './context.js';
import { emailString, isHttpUrl } from '../schemas/common.js';
import { CUSTOM_FIELD_TYPES } from '../schemas/entities/type-lists.js';
import { isIsoDateTime, isRealDate } from '../schemas/fields.js';

/** Entity types a definition may target: the entities with custom fields (the entity list's, written out in type-lists.ts). */
export const ENTITY_TYPES = CUSTOM_FIELD_TYPES;
export type CustomFieldEntity = (typeof ENTITY_TYPES)[number];
import { FIELD_TYPES, customFieldSchema } from '../schemas/custom-fields.js';

export { FIELD_TYPES };
export type FieldType = (typeof FIELD_TYPES)[number];
export const MAX_DEFINITIONS_PER_ENTITY = 200;

export interface CustomFieldDefinition {
  id: string;
  account_id: string;
  created_by: string;
  entity_type: CustomFieldEntity;
  name: string;
  field_type: FieldType;
  options: string[];
  description: string;
  /** Keeps sort-ordered entries (contract §17): sort and range conditions on it at any size. */
  indexed: boolean;
  /** `building` while a change of `indexed` is applied to the existing records. */
  index_status: 'ready' | 'building';
  created_at: string;
  updated_at: string;
}

/** The API shape: the fields of the record schema (shared/schemas/custom-fields.ts), nothing else. */
const shape: (item: object) => CustomFieldDefinition = apiShape(customFieldSchema);
/** Definitions stored before `indexed` existed read as not indexed. */
const toApi = (item: object): CustomFieldDefinition => shape({ indexed: false, index_status: 'ready', ...item });

const isSelect = (t: FieldType) => t === 'select' || t === 'multi_select';

/** A valibot schema for a value of the given definition (contract §5). */
export function valueSchema(def: Pick<CustomFieldDefinition, 'field_type' | 'options'>): v.GenericSchema {
  switch (def.field_type) {
    case 'text':
      return v.pipe(v.string('must be a string'), v.maxLength(10_000, 'must be at most 10000 characters'));
    case 'number':
      return v.pipe(v.number('must be a number'), v.finite('must be a finite number'));
    case 'boolean':
      return v.boolean('must be a boolean');
    case 'date':
      return v.pipe(v.string('must be a date string'), v.check(isRealDate, 'must be a real date in YYYY-MM-DD form'));
    case 'datetime':
      return v.pipe(
        v.string('must be a datetime string'),
        v.check(isIsoDateTime, 'must be an ISO 8601 datetime'),
      );
    case 'url':
      return v.pipe(v.string('must be a string'), v.maxLength(2048, 'must be at most 2048 characters'), v.check((s) => isHttpUrl(s), 'must be an http(s) URL'));
    case 'email':
      return v.pipe(v.string('must be a string'), v.check((s) => s !== '' && v.is(emailString, s), 'must be a valid email address'));
    case 'select':
      return v.picklist(def.options as [string, ...string[]], 'must be one of the options');
    case 'multi_select':
      return v.pipe(
        v.array(v.picklist(def.options as [string, ...string[]], 'must be one of the options'), 'must be an array of options'),
        v.check((a) => new Set(a).size === a.length, 'options must be distinct'),
      );
  }
}

export async function listDefinitions(accountId: string, entity?: CustomFieldEntity): Promise<CustomFieldDefinition[]> {
  const items = await listDefinitionItems(accountId);
  return items
    .map(toApi)
    .filter((d) => !entity || d.entity_type === entity)
    .sort(newestFirst);
}

export interface CustomFieldChanges {
  set: Record<string, unknown>;
  remove: string[];
}

/**
 * Validates custom field values of a record against the account's definitions for its entity
 * type. `null` removes a key. Failures: `<family>.invalid_custom_fields` with one detail per key.
 */
export async function checkCustomFields(
  family: Family,
  accountId: string,
  entity: CustomFieldEntity,
  input: Record<string, unknown>,
  /** The entity type's definitions when the caller already read them (a batch reads them once). */
  definitions?: readonly CustomFieldDefinition[],
): Promise<CustomFieldChanges> {
  const entries = Object.entries(input);
  if (entries.length === 0) return { set: {}, remove: [] };
  const defs = new Map((definitions ?? (await listDefinitions(accountId, entity))).map((d) => [d.id, d]));
  const details: ErrorDetail[] = [];
  const set: Record<string, unknown> = {};
  const remove: string[] = [];
  for (const [key, value] of entries) {
    const def = defs.get(key.toLowerCase());
    if (!def) {
      details.push({ path: `custom_fields.${key}`, message: `"${key}" is not the id of a ${entity} custom field of this account (custom_fields keys are definition ids, not names: see custom-fields-list)` });
      continue;
    }
    if (value === null) {
      remove.push(def.id);
      continue;
    }
    const out = v.safeParse(valueSchema(def), value);
    if (out.success) set[def.id] = out.output;
    else details.push({ path: `custom_fields.${key}`, message: out.issues[0]?.message ?? 'invalid value' });
  }
  if (details.length) {
    throw new ApiError(`${family}.invalid_custom_fields`, `custom field values do not match their definitions: ${details.map((d) => d.path.slice('custom_fields.'.length)).join(', ')}`, details);
  }
  return { set, remove };
}

// --- definitions CRUD ---------------------------------------------------------------------------

const FAMILY: Family = 'custom_fields';

export interface CreateDefinitionInput {
  entity_type: CustomFieldEntity;
  name: string;
  field_type: FieldType;
  options?: string[];
  description?: string;
}

function checkOptions(fieldType: FieldType, options: string[] | undefined): string[] {
  if (isSelect(fieldType)) {
    if (!options || options.length === 0) throw invalidRequest(FAMILY, 'options are required for select fields', [{ path: 'options', message: 'is required for select and multi_select' }]);
    if (new Set(options).size !== options.length) throw invalidRequest(FAMILY, 'options must be distinct', [{ path: 'options', message: 'must be distinct' }]);
    return options;
  }
  if (options !== undefined) throw invalidRequest(FAMILY, 'options are only allowed for select fields', [{ path: 'options', message: 'only allowed for select and multi_select' }]);
  return [];
}

export async function createDefinition(ctx: OperationContext, input: CreateDefinitionInput): Promise<CustomFieldDefinition> {
  const options = checkOptions(input.field_type, input.options);
  const now = new Date().toISOString();
  const def: CustomFieldDefinition = {
    id: randomUUID(),
    account_id: ctx.accountId,
    created_by: ctx.userId,
    entity_type: input.entity_type,
    name: input.name,
    field_type: input.field_type,
    options,
    description: input.description ?? '',
    indexed: false,
    index_status: 'ready',
    created_at: now,
    updated_at: now,
  };
  const created = await putDefinitionItem(ctx.accountId, { ...def }, MAX_DEFINITIONS_PER_ENTITY);
  if (!created) {
    throw invalidRequest(FAMILY, `an account has at most ${MAX_DEFINITIONS_PER_ENTITY} custom fields per entity type`, [{ path: 'entity_type', message: 'limit reached' }]);
  }
  return def;
}

export async function getDefinition(ctx: OperationContext, id: string): Promise<CustomFieldDefinition> {
  const item = await getDefinitionItem(ctx.accountId, id);
  if (!item) throw notFound(FAMILY, 'custom field');
  return toApi(item);
}

export interface UpdateDefinitionInput {
  id: string;
  name?: string;
  description?: string;
  options?: string[];
}

export async function updateDefinition(ctx: OperationContext, input: UpdateDefinitionInput): Promise<CustomFieldDefinition> {
  const current = await getDefinition(ctx, input.id);
  const options = input.options === undefined ? undefined : checkOptions(current.field_type, input.options);
  const next: CustomFieldDefinition = {
    ...current,
    ...(input.name !== undefined ? { name: input.name } : {}),
    ...(input.description !== undefined ? { description: input.description } : {}),
    ...(options !== undefined ? { options } : {}),
  };
  if (next.name === current.name && next.description === current.description && JSON.stringify(next.options) === JSON.stringify(current.options)) return current;
  next.updated_at = new Date().toISOString();
  if (!(await updateDefinitionItem(ctx.accountId, next))) throw notFound(FAMILY, 'custom field');
  return next;
}

/** Deletes a definition; its values disappear from every read at once (see meta `df`). */
export async function deleteDefinition(ctx: OperationContext, id: string): Promise<{ deleted: true }> {
  const current = await getDefinition(ctx, id);
  if (!(await deleteDefinitionItem(ctx.accountId, id, current.entity_type))) throw notFound(FAMILY, 'custom field');
  return { deleted: true };
}
