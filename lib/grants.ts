import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type { Access } from '../shared/http/registry.js';
import { createTableInput, keys } from '../shared/db/table.js';

/**
 * Table actions the code uses, split by access mode. TransactGetItems/TransactWriteItems have no
 * IAM action of their own: they are authorized as the Get/Put/Update/Delete/ConditionCheck they contain.
 * No Scan, no DescribeTable, no `dynamodb:*`.
 */
export const TABLE_READ_ACTIONS = ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query', 'dynamodb:ConditionCheckItem'] as const;
export const TABLE_WRITE_ACTIONS = ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:BatchWriteItem'] as const;

/** The GSI names of the shared table definition (reads may query them; writes never address an index). */
export const INDEX_NAMES = createTableInput('_').GlobalSecondaryIndexes.map((index) => index.IndexName);

/**
 * Sets TABLE_NAME and grants exactly the access mode (like Powertools' `bindTable` RO/RW):
 * read → GetItem/BatchGetItem/Query/ConditionCheckItem on the table and its named indexes;
 * write → the same plus PutItem/UpdateItem/DeleteItem/BatchWriteItem on the table.
 */
export function bindTable(fn: lambda.Function, table: dynamodb.ITable, access: Access): void {
  fn.addEnvironment('TABLE_NAME', table.tableName);
  const indexArns = INDEX_NAMES.map((name) => `${table.tableArn}/index/${name}`);
  fn.addToRolePolicy(new iam.PolicyStatement({ actions: [...TABLE_READ_ACTIONS], resources: [table.tableArn, ...indexArns] }));
  if (access === 'write') {
    fn.addToRolePolicy(new iam.PolicyStatement({ actions: [...TABLE_WRITE_ACTIONS], resources: [table.tableArn] }));
  }
}

/**
 * The cursor signing key lives in the table (shared/db/cursor.ts: `keys.system('CURSOR_KEY')`) and
 * is created by the first list request of an installation, which is a read-only operation.
 * Read functions may therefore put items in the installation's SYSTEM partition, and nowhere
 * else: `dynamodb:LeadingKeys` pins the partition key. They still cannot update or delete,
 * and cannot touch any account's data.
 */
export const SYSTEM_PARTITION = keys.system('CURSOR_KEY').pk;

export function grantSystemKeySeed(fn: lambda.Function, table: dynamodb.ITable): void {
  fn.addToRolePolicy(
    new iam.PolicyStatement({
      sid: 'SeedSystemPartitionOnly',
      actions: ['dynamodb:PutItem'],
      resources: [table.tableArn],
      conditions: { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [SYSTEM_PARTITION] } },
    }),
  );
}
