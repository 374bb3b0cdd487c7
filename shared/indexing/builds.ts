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

const limitExceeded = (entity: string, count: number) =>
  new ApiError('custom_fields.limit_exceeded', `an account has at most ${MAX_INDEXED_PER_ENTITY} indexed custom fields per entity type`, [{ path: 'indexed', message: `${entity} has ${count} indexed fields` }]);

/** The ids of the entity type's indexed fields; limit_exceeded when there is no room for another. */
async function checkIndexLimit(accountId: string, entity: CustomFieldEntity): Promise<string[]> {
  const indexed = (await listDefinitions(accountId, entity)).filter((d) => d.indexed).map((d) => d.id);
  if (indexed.length >= MAX_INDEXED_PER_ENTITY) throw limitExceeded(entity, indexed.length);
  return indexed;
}

/**
 * Queues the build of a definition's new `indexed` (entries written for every record, or
 * removed). Turning it on takes a place among the entity type's indexed fields in the same
 * transaction, so that concurrent requests cannot pass the limit together (`known`: the ids read
 * by checkIndexLimit); 'limit' when another took the last place since.
 */
async function startBuild(accountId: string, def: CustomFieldDefinition, indexed: boolean, known: readonly string[] = []): Promise<CustomFieldDefinition | 'limit'> {
  const id = randomUUID();
  const now = new Date().toISOString();
  const type = CUSTOM_FIELD_FILTER_TYPES[def.field_type];
  const started = await startDefinitionIndex(accountId, def.id, { indexed, buildId: id, type, entityType: def.entity_type, now, known, max: MAX_INDEXED_PER_ENTITY });
  if (started === 'gone') throw notFound('custom_fields', 'custom field');
  if (started === 'limit') return 'limit';
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
  const known = indexed ? await checkIndexLimit(ctx.accountId, rest.entity_type) : [];
  const def = await createDefinition(ctx, rest);
  if (!indexed) return def;
  const started = await startBuild(ctx.accountId, def, true, known);
  if (started !== 'limit') return started;
  // Another request took the last place meanwhile: the request fails whole, so its definition goes.
  await deleteDefinition(ctx, def.id);
  throw limitExceeded(rest.entity_type, MAX_INDEXED_PER_ENTITY);
}

export async function updateIndexedDefinition(ctx: OperationContext, input: UpdateDefinitionInput & { indexed?: boolean }): Promise<CustomFieldDefinition> {
  const { indexed, ...rest } = input;
  // The limit is checked before anything is written, so that a refused request changes nothing
  // (but for a race lost to another request taking the last place in between).
  let known: string[] = [];
  if (indexed) {
    const before = await getDefinition(ctx, rest.id);
    if (!before.indexed) known = await checkIndexLimit(ctx.accountId, before.entity_type);
  }
  const def = await updateDefinition(ctx, rest);
  if (indexed === undefined || indexed === def.indexed) return def;
  const started = await startBuild(ctx.accountId, def, indexed, known);
  if (started === 'limit') throw limitExceeded(def.entity_type, MAX_INDEXED_PER_ENTITY);
  return started;
}

/** Deletes a definition; an indexed one's entries are removed in the background. */
export async function deleteIndexedDefinition(ctx: OperationContext, id: string): Promise<{ deleted: true }> {
  const def = await getDefinition(ctx, id);
  const out = await deleteDefinition(ctx, id);
  if (def.indexed || def.index_status === 'building') {
    await dropIndexedField(ctx.accountId, def.id, def.entity_type);
    await queueBuild(ctx.accountId, def, 'remove', randomUUID(), new Date().toISOString());
  }
  return out;
}
