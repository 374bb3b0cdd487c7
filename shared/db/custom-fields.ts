/**
 * Custom-field definitions in the table: one partition per account; the per-entity-type count
 * (at most `max` definitions) and the deleted-definition ids live on the account's META item.
 */
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from './client.js';
import { cond, eq, exists, is, notExists, or, transact, transactUnlessRefused, update } from './expr.js';
import { queryPartition, writeUnlessRefused } from './items.js';
import { keys, metaAttr } from './table.js';

export interface DefinitionItem {
  id: string;
  entity_type: string;
  name: string;
  description: string;
  options: string[];
  updated_at: string;
}

export const listDefinitionItems = (accountId: string) => queryPartition(keys.customFieldPartition(accountId));

export async function getDefinitionItem(accountId: string, id: string): Promise<(Record<string, unknown> & { index_build?: string }) | undefined> {
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: keys.customField(accountId, id), ConsistentRead: true }));
  return out.Item;
}

/** Creates a definition and counts it; false when the entity type already has `max`. */
export async function putDefinitionItem(accountId: string, def: DefinitionItem & Record<string, unknown>, max: number): Promise<boolean> {
  const count = metaAttr.definitionCount(def.entity_type);
  return transactUnlessRefused([
    { Put: { TableName: tableName(), Item: { ...keys.customField(accountId, def.id), ...def }, ...notExists() } },
    { Update: { TableName: tableName(), Key: keys.accountMeta(accountId), ...update({ add: { [count]: 1 } }, or(notExists(count), is(count, '<', max))) } },
  ], 1);
}

/** Writes a definition's name, description and options; false when it no longer exists. */
export async function updateDefinitionItem(accountId: string, next: DefinitionItem): Promise<boolean> {
  return writeUnlessRefused({
    Update: {
      TableName: tableName(),
      Key: keys.customField(accountId, next.id),
      ...update({ set: { name: next.name, description: next.description, options: next.options, updated_at: next.updated_at } }, exists()),
    },
  });
}

/** Deletes a definition; its id joins the META item's deleted ids so reads hide its values at once. */
export async function deleteDefinitionItem(accountId: string, id: string, entityType: string): Promise<boolean> {
  return transactUnlessRefused([
    { Delete: { TableName: tableName(), Key: keys.customField(accountId, id), ...exists() } },
    { Update: { TableName: tableName(), Key: keys.accountMeta(accountId), ...update({ add: { [metaAttr.deletedFields]: new Set([id]), [metaAttr.definitionCount(entityType)]: -1 } }) } },
  ], 0);
}

/**
 * Starts applying a change of a definition's `indexed` (contract §17), in one transaction: the
 * definition (`indexed`, `index_status: building`, the build's id) and the account's indexed
 * fields (META `ix#<id>`: added with its §17 type when turned on, removed when turned off), so
 * every write from then on keeps, or stops keeping, the field's entries.
 *
 * The entity type's set of indexed fields (META `ix_set_<type>`) gains or loses the id in the
 * same transaction, and turning one on is refused (`limit`) when the set already holds `max`
 * others: two concurrent changes cannot both pass the limit. `known`: the indexed fields of the
 * type as just read, which seed the set where an account has none yet. `gone`: the definition is.
 */
export async function startDefinitionIndex(
  accountId: string,
  id: string,
  change: { indexed: boolean; buildId: string; type: string; entityType: string; now: string; known: readonly string[]; max: number },
): Promise<'started' | 'gone' | 'limit'> {
  const set = metaAttr.indexedSet(change.entityType);
  const field = metaAttr.indexedField(id);
  // The cap: the set (or, where there is none yet, the fields as read) holds fewer than `max`, or the field already.
  const cap = cond('(attribute_not_exists(#s) AND :known < :max) OR size(#s) < :max OR contains(#s, :id)', { ':id': id, ':known': change.known.length, ':max': change.max }, { '#s': set });
  const refused = await transact(
    [
      { Update: { TableName: tableName(), Key: keys.customField(accountId, id), ...update({ set: { indexed: change.indexed, index_status: 'building', index_build: change.buildId, updated_at: change.now } }, exists()) } },
      {
        Update: {
          TableName: tableName(),
          Key: keys.accountMeta(accountId),
          ...(change.indexed ? update({ set: { [field]: change.type }, add: { [set]: new Set([...change.known, id]) } }, cap) : unindex(field, set, id)),
        },
      },
    ],
    ['gone', 'limit'] as const,
  );
  return refused ? (refused.which as 'gone' | 'limit') : 'started';
}

/** Removes a field from the account's indexed fields and from its entity type's set. */
const unindex = (field: string, set: string, id: string) => update({ remove: [field], delete: { [set]: new Set([id]) } });

/** Marks a definition's index `ready` once its build `buildId` is done (not when a later change superseded it). */
export async function finishDefinitionIndex(accountId: string, id: string, buildId: string): Promise<boolean> {
  return writeUnlessRefused({
    Update: {
      TableName: tableName(),
      Key: keys.customField(accountId, id),
      ...update({ set: { index_status: 'ready' } }, eq('index_build', buildId)),
    },
  });
}

/** Removes a field from the account's indexed fields and from its entity type's set (its definition deleted). */
export async function dropIndexedField(accountId: string, id: string, entityType: string): Promise<void> {
  await db().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: keys.accountMeta(accountId),
      ...unindex(metaAttr.indexedField(id), metaAttr.indexedSet(entityType), id),
    }),
  );
}
