/**
 * Custom-field definitions in the table: one partition per account; the per-entity-type count
 * (at most `max` definitions) and the deleted-definition ids live on the account's META item.
 */
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from './client.js';
import { isConditionFailure, queryPartition, transactUnlessRefused } from './items.js';
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
  try {
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.customField(accountId, next.id),
        UpdateExpression: 'SET #n = :n, description = :d, #o = :o, updated_at = :u',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeNames: { '#n': 'name', '#o': 'options' },
        ExpressionAttributeValues: { ':n': next.name, ':d': next.description, ':o': next.options, ':u': next.updated_at },
      }),
    );
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
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
 * every write from then on keeps, or stops keeping, the field's entries. False when the
 * definition is gone, or (`maxIndexed`) the entity type has that many indexed fields already.
 */
export async function startDefinitionIndex(accountId: string, id: string, change: { indexed: boolean; buildId: string; type: string; now: string }): Promise<boolean> {
  return transactUnlessRefused([
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
        UpdateExpression: change.indexed ? 'SET #a = :t' : 'REMOVE #a',
        ExpressionAttributeNames: { '#a': metaAttr.indexedField(id) },
        ...(change.indexed ? { ExpressionAttributeValues: { ':t': change.type } } : {}),
      },
    },
  ], 0);
}

/** Marks a definition's index `ready` once its build `buildId` is done (not when a later change superseded it). */
export async function finishDefinitionIndex(accountId: string, id: string, buildId: string): Promise<boolean> {
  try {
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.customField(accountId, id),
        UpdateExpression: 'SET index_status = :r',
        ConditionExpression: 'index_build = :j',
        ExpressionAttributeValues: { ':r': 'ready', ':j': buildId },
      }),
    );
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
}

/** Removes a field from the account's indexed fields (its definition deleted). */
export async function dropIndexedField(accountId: string, id: string): Promise<void> {
  await db().send(new UpdateCommand({ TableName: tableName(), Key: keys.accountMeta(accountId), UpdateExpression: 'REMOVE #a', ExpressionAttributeNames: { '#a': metaAttr.indexedField(id) } }));
}
