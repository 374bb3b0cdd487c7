import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { createTableInput } from '../shared/db/table.js';
import { type PolicyStatement, type PolicySubject, policyOf, type ResourceArns } from '../shared/schemas/policies.js';

export { TABLE_WRITE_ACTIONS } from '../shared/schemas/policies.js';

/** The GSI names of the shared table definition (reads may query them; writes never address an index). */
export const INDEX_NAMES = createTableInput('_').GlobalSecondaryIndexes.map((index) => index.IndexName);

/** The CDK statement of one statement of the policy data (shared/schemas/policies.ts). */
export const toPolicyStatement = (s: PolicyStatement): iam.PolicyStatement =>
  new iam.PolicyStatement({
    sid: s.sid,
    actions: [...s.actions],
    resources: [...s.resources],
    ...(s.conditions ? { conditions: Object.fromEntries(Object.entries(s.conditions).map(([op, c]) => [op, Object.fromEntries(Object.entries(c).map(([k, v]) => [k, [...v]]))])) } : {}),
  });

/**
 * Grants a function exactly its policy as data (`policyOf`: its bindings and items), the same
 * statements local mode enforces (local/iam.ts). Nothing else in lib/ grants a function access to
 * the service's resources.
 */
export function grantPolicy(fn: lambda.Function, subject: PolicySubject, arns: ResourceArns): void {
  for (const statement of policyOf(subject, arns)) fn.addToRolePolicy(toPolicyStatement(statement));
}
