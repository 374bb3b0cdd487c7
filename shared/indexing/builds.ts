/**
 * `indexed` custom fields (contract §17): turning it on or off (on create, update or delete of a
 * definition) marks the definition `building`, changes the account's indexed fields in the same
 * transaction (every write from then on keeps, or stops keeping, the field's entries) and queues
 * an index build for the existing records (./worker.ts). At most MAX_INDEXED_PER_ENTITY indexed
 * fields per entity type: `custom_fields.limit_exceeded`.
 */
import { randomUUID } from 'node:crypto';
import { dropIndexedField, startDefinitionIndex } from '../db/custom-fields.js';
import { insertIndexBuild } from '../db/index-builds.js';
import type { OperationContext } from '../domain/context.js';
import {
  createDefinition,
  type CreateDefinitionInput,
  type CustomFieldDefinition,
  type CustomFieldEntity,
  deleteDefinition,
  getDefinition,
  listDefinitions,
  updateDefinition,
  type UpdateDefinitionInput,
} from '../domain/custom-fields.js';
import { ApiError, notFound } from '../errors.js';
import { CUSTOM_FIELD_FILTER_TYPES } from '../schemas/filter.js';
import { enqueueIndexBuild } from './storage.js';

export const MAX_INDEXED_PER_ENTITY = 10;

async function checkIndexLimit(accountId: string, entity: CustomFieldEntity): Promise<void> {
  const indexed = (await listDefinitions(accountId, entity)).filter((d) => d.indexed).length;
  if (indexed >= MAX_INDEXED_PER_ENTITY) {
    throw new ApiError('custom_fields.limit_exceeded', `an account has at most ${MAX_INDEXED_PER_ENTITY} indexed custom fields per entity type`, [{ path: 'indexed', message: `${entity} has ${indexed} indexed fields` }]);
  }
}

/** Queues the build of a definition's new `indexed` (entries written for every record, or removed). */
async function startBuild(accountId: string, def: CustomFieldDefinition, indexed: boolean): Promise<CustomFieldDefinition> {
  const id = randomUUID();
  const now = new Date().toISOString();
  const type = CUSTOM_FIELD_FILTER_TYPES[def.field_type];
  if (!(await startDefinitionIndex(accountId, def.id, { indexed, buildId: id, type, now }))) throw notFound('custom_fields', 'custom field');
  await queueBuild(accountId, def, indexed ? 'build' : 'remove', id, now);
  return { ...def, indexed, index_status: 'building', updated_at: now };
}

async function queueBuild(accountId: string, def: CustomFieldDefinition, action: 'build' | 'remove', id: string, now: string): Promise<void> {
  const type = CUSTOM_FIELD_FILTER_TYPES[def.field_type];
  await insertIndexBuild({ id, account_id: accountId, created_at: now, status: 'processing', field_id: def.id, entity_type: def.entity_type, field_type: type, action, position: 0, done: 0 });
  await enqueueIndexBuild({ account_id: accountId, build_id: id });
}

export async function createIndexedDefinition(ctx: OperationContext, input: CreateDefinitionInput & { indexed?: boolean }): Promise<CustomFieldDefinition> {
  const { indexed, ...rest } = input;
  if (indexed) await checkIndexLimit(ctx.accountId, rest.entity_type);
  const def = await createDefinition(ctx, rest);
  return indexed ? startBuild(ctx.accountId, def, true) : def;
}

export async function updateIndexedDefinition(ctx: OperationContext, input: UpdateDefinitionInput & { indexed?: boolean }): Promise<CustomFieldDefinition> {
  const { indexed, ...rest } = input;
  const def = await updateDefinition(ctx, rest);
  if (indexed === undefined || indexed === def.indexed) return def;
  if (indexed) await checkIndexLimit(ctx.accountId, def.entity_type);
  return startBuild(ctx.accountId, def, indexed);
}

/** Deletes a definition; an indexed one's entries are removed in the background. */
export async function deleteIndexedDefinition(ctx: OperationContext, id: string): Promise<{ deleted: true }> {
  const def = await getDefinition(ctx, id);
  const out = await deleteDefinition(ctx, id);
  if (def.indexed || def.index_status === 'building') {
    await dropIndexedField(ctx.accountId, def.id);
    await queueBuild(ctx.accountId, def, 'remove', randomUUID(), new Date().toISOString());
  }
  return out;
}
