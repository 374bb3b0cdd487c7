import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { acknowledge } from './nag.js';

/** The erasure worker's time limit (functions/topology.ts): a person's copies take seconds; a long history, minutes. */
export const ERASURE_WORKER_TIMEOUT = Duration.minutes(15);

export interface ErasuresProps {
  /** The stack's alarm factory (actions to the alarm topic). */
  alarm: (id: string, props: cloudwatch.AlarmProps) => unknown;
}

/**
 * Erasures' resources (contract §18): the erasure queue with its dead-letter queue, and an alarm
 * when an erasure waits or fails (the contract promises completion within a month; we aim at seconds).
 */
export class Erasures extends Construct {
  readonly queue: sqs.Queue;
  readonly deadLetterQueue: sqs.Queue;

  constructor(scope: Construct, id: string, props: ErasuresProps) {
    super(scope, id);
    const queueDefaults = { encryption: sqs.QueueEncryption.SQS_MANAGED, enforceSSL: true } as const;
    this.deadLetterQueue = new sqs.Queue(this, 'Dlq', { ...queueDefaults, retentionPeriod: Duration.days(14) });
    acknowledge(this.deadLetterQueue, 'AwsSolutions-SQS3', 'This is the dead-letter queue of the erasure queue.');
    acknowledge(this.deadLetterQueue, 'Serverless-SQSRedrivePolicy', 'This is the dead-letter queue of the erasure queue.');
    this.queue = new sqs.Queue(this, 'Queue', {
      ...queueDefaults,
      visibilityTimeout: ERASURE_WORKER_TIMEOUT.plus(Duration.minutes(1)),
      retentionPeriod: Duration.days(14),
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: 10 },
    });
    props.alarm('ErasuresDlqDepth', {
      alarmDescription: 'An erasure failed ten times: a person is not forgotten yet (contract §18).',
      metric: this.deadLetterQueue.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(5), statistic: 'Maximum' }),
      threshold: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
    });
  }
}
