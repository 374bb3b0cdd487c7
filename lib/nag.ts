import { type Stack, Validations } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';

/**
 * cdk-nag (v3) findings that are by design, acknowledged in code with their reasons. The CDK
 * test (test/cdk/stack.test.ts, "cdk-nag") runs AwsSolutionsChecks and ServerlessChecks over the whole app
 * and requires zero unacknowledged errors and warnings. Findings that hold for every function
 * are acknowledged in lib/api-function.ts.
 */
export const acknowledge = (scope: IConstruct, id: string, reason: string) => Validations.of(scope).acknowledge({ id, reason });

export const NAG_REASONS = {
  fallbackRoute:
    'The $default route answers unknown operations (404) and wrong methods (405) with the contract\'s envelope; it reads no data (its function has no table access) and must answer without a token.',
  failureQueueIsDlq:
    'This queue is itself a dead-letter/on-failure queue (the stream mapping\'s on-failure destination or the delivery queue\'s DLQ): it has no DLQ of its own. Its depth is alarmed.',
  sqsMappingDestination:
    'An SQS event source mapping has no on-failure destination setting; failed messages go to the source queue\'s redrive DLQ (DeliveryDlq, maxReceiveCount 5), which is alarmed.',
  cdkBucketNotifications:
    'CDK\'s own singleton custom-resource Lambda that configures S3 bucket notifications at deploy time (BucketNotificationsHandler); CDK creates its role with AWSLambdaBasicExecutionRole and offers no way to replace it. It runs only during deployments.',
  streamListStreams:
    'The DynamoDB event source grants dynamodb:ListStreams, which supports no resource-level permission ("*"); the stream read actions are scoped to the table\'s stream ARN.',
} as const;

/** Acknowledges the by-design findings of constructs CDK adds by itself (found by construct id). */
export function acknowledgeCdkInternals(stack: Stack): void {
  for (const child of stack.node.children) {
    if (child.node.id.startsWith('BucketNotificationsHandler')) {
      acknowledge(child, 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]', NAG_REASONS.cdkBucketNotifications);
    }
  }
}
