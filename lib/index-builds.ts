import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { acknowledge } from './nag.js';

/** The index-build worker's time limit (functions/topology.ts): a page of 200 records takes well under a second; a large account, minutes. */
export const INDEX_BUILD_WORKER_TIMEOUT = Duration.minutes(15);

export interface IndexBuildsProps {
  /** The stack's alarm factory (actions to the alarm topic). */
  alarm: (id: string, props: cloudwatch.AlarmProps) => unknown;
}

/**
 * Index builds' resources (contract §17): the index-build queue with its dead-letter queue, and an
 * alarm when a build fails.
 */
export class IndexBuilds extends Construct {
  readonly queue: sqs.Queue;
  readonly deadLetterQueue: sqs.Queue;

  constructor(scope: Construct, id: string, props: IndexBuildsProps) {
    super(scope, id);
    const queueDefaults = { encryption: sqs.QueueEncryption.SQS_MANAGED, enforceSSL: true } as const;
    this.deadLetterQueue = new sqs.Queue(this, 'Dlq', { ...queueDefaults, retentionPeriod: Duration.days(14) });
    acknowledge(this.deadLetterQueue, 'AwsSolutions-SQS3', 'This is the dead-letter queue of the index-build queue.');
    acknowledge(this.deadLetterQueue, 'Serverless-SQSRedrivePolicy', 'This is the dead-letter queue of the index-build queue.');
    this.queue = new sqs.Queue(this, 'Queue', {
      ...queueDefaults,
      visibilityTimeout: INDEX_BUILD_WORKER_TIMEOUT.plus(Duration.minutes(1)),
      retentionPeriod: Duration.days(14),
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: 10 },
    });
    props.alarm('IndexBuildsDlqDepth', {
      alarmDescription: 'An index build failed ten times: a custom field stays building (contract §17).',
      metric: this.deadLetterQueue.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(5), statistic: 'Maximum' }),
      threshold: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
    });
  }
}
