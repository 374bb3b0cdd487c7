/**
 * Custom-field definitions in the table: one partition per account; the per-entity-type count
 * (at most `max` definitions) and the deleted-definition ids live on the account's META item.
 */
import { GetCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from './client.js';
import { cancellationCodes, queryPartition, transactUnlessRefused, writeUnlessRefused } from './items.js';
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
  return transactUnlessRefused([
    { Put: { TableName: tableName(), Item: { ...keys.customField(accountId, def.id), ...def }, ConditionExpression: 'attribute_not_exists(pk)' } },
    {
      Update: {
        TableName: tableName(),
        Key: keys.accountMeta(accountId),
        UpdateExpression: 'ADD #c :one',
        ConditionExpression: 'attribute_not_exists(#c) OR #c < :max',
        ExpressionAttributeNames: { '#c': metaAttr.definitionCount(def.entity_type) },
        ExpressionAttributeValues: { ':one': 1, ':max': max },
      },
    },
  ], 1);
}

/** Writes a definition's name, description and options; false when it no longer exists. */
export async function updateDefinitionItem(accountId: string, next: DefinitionItem): Promise<boolean> {
  return writeUnlessRefused({
    Update: {
      TableName: tableName(),
      Key: keys.customField(accountId, next.id),
      UpdateExpression: 'SET #n = :n, description = :d, #o = :o, updated_at = :u',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeNames: { '#n': 'name', '#o': 'options' },
      ExpressionAttributeValues: { ':n': next.name, ':d': next.description, ':o': next.options, ':u': next.updated_at },
    },
  });
}

/** Deletes a definition; its id joins the META item's deleted ids so reads hide its values at once. */
export async function deleteDefinitionItem(accountId: string, id: string, entityType: string): Promise<boolean> {
  return transactUnlessRefused([
    { Delete: { TableName: tableName(), Key: keys.customField(accountId, id), ConditionExpression: 'attribute_exists(pk)' } },
    {
      Update: {
        TableName: tableName(),
        Key: keys.accountMeta(accountId),
        UpdateExpression: 'ADD #df :id, #c :minus',
        ExpressionAttributeNames: { '#df': metaAttr.deletedFields, '#c': metaAttr.definitionCount(entityType) },
        ExpressionAttributeValues: { ':id': new Set([id]), ':minus': -1 },
      },
    },
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
  try {
    await db().send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Update: {
              TableName: tableName(),
              Key: keys.customField(accountId, id),
              UpdateExpression: 'SET #i = :i, index_status = :b, index_build = :j, updated_at = :u',
              ConditionExpression: 'attribute_exists(pk)',
              ExpressionAttributeNames: { '#i': 'indexed' },
              ExpressionAttributeValues: { ':i': change.indexed, ':b': 'building', ':j': change.buildId, ':u': change.now },
            },
          },
          {
            Update: {
              TableName: tableName(),
              Key: keys.accountMeta(accountId),
              ...(change.indexed
                ? {
                    UpdateExpression: 'SET #a = :t ADD #s :ids',
                    ConditionExpression: '(attribute_not_exists(#s) AND :known < :max) OR size(#s) < :max OR contains(#s, :id)',
                    ExpressionAttributeNames: { '#a': metaAttr.indexedField(id), '#s': set },
                    ExpressionAttributeValues: { ':t': change.type, ':ids': new Set([...change.known, id]), ':id': id, ':known': change.known.length, ':max': change.max },
                  }
                : { UpdateExpression: 'REMOVE #a DELETE #s :ids', ExpressionAttributeNames: { '#a': metaAttr.indexedField(id), '#s': set }, ExpressionAttributeValues: { ':ids': new Set([id]) } }),
            },
          },
        ],
      }),
    );
    return 'started';
  } catch (error) {
    const codes = cancellationCodes(error);
    if (codes?.[0] === 'ConditionalCheckFailed') return 'gone';
    if (codes?.[1] === 'ConditionalCheckFailed') return 'limit';
    throw error;
  }
}

/** Marks a definition's index `ready` once its build `buildId` is done (not when a later change superseded it). */
export async function finishDefinitionIndex(accountId: string, id: string, buildId: string): Promise<boolean> {
  return writeUnlessRefused({
    Update: {
      TableName: tableName(),
      Key: keys.customField(accountId, id),
      UpdateExpression: 'SET index_status = :r',
      ConditionExpression: 'index_build = :j',
      ExpressionAttributeValues: { ':r': 'ready', ':j': buildId },
    },
  });
}

/** Removes a field from the account's indexed fields and from its entity type's set (its definition deleted). */
export async function dropIndexedField(accountId: string, id: string, entityType: string): Promise<void> {
  await db().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: keys.accountMeta(accountId),
      UpdateExpression: 'REMOVE #a DELETE #s :ids',
      ExpressionAttributeNames: { '#a': metaAttr.indexedField(id), '#s': metaAttr.indexedSet(entityType) },
      ExpressionAttributeValues: { ':ids': new Set([id]) },
    }),
  );
}
