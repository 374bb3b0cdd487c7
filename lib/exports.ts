import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { acknowledge } from './nag.js';

/** The export worker's time limit (functions/topology.ts): 100,000 rows take a few minutes. */
export const EXPORT_WORKER_TIMEOUT = Duration.minutes(15);

export interface ExportsProps {
  /** The stack's alarm factory (actions to the alarm topic). */
  alarm: (id: string, props: cloudwatch.AlarmProps) => unknown;
}

/**
 * CSV exports' resources (contract §16): the export queue with its dead-letter queue, and their
 * alarms. The files go to the imports bucket (lib/imports.ts: private, encrypted, SSL only,
 * files expire after 7 days, unfinished multipart uploads aborted after a day) under `exports/`;
 * the `exportsBucket` binding (lib/bindings.ts) grants that prefix only. The worker and the
 * operations are functions of the topology.
 */
export class Exports extends Construct {
  readonly queue: sqs.Queue;
  readonly deadLetterQueue: sqs.Queue;

  constructor(scope: Construct, id: string, props: ExportsProps) {
    super(scope, id);
    const queueDefaults = { encryption: sqs.QueueEncryption.SQS_MANAGED, enforceSSL: true } as const;
    this.deadLetterQueue = new sqs.Queue(this, 'Dlq', { ...queueDefaults, retentionPeriod: Duration.days(14) });
    acknowledge(this.deadLetterQueue, 'AwsSolutions-SQS3', 'This is the dead-letter queue of the export queue.');
    acknowledge(this.deadLetterQueue, 'Serverless-SQSRedrivePolicy', 'This is the dead-letter queue of the export queue.');
    this.queue = new sqs.Queue(this, 'Queue', {
      ...queueDefaults,
      // A message stays invisible while its job runs.
      visibilityTimeout: EXPORT_WORKER_TIMEOUT.plus(Duration.minutes(1)),
      retentionPeriod: Duration.days(4),
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: 5 },
    });

    const fiveMinutes = Duration.minutes(5);
    props.alarm('ExportsDlqDepth', {
      alarmDescription: 'Export messages are waiting in the export dead-letter queue (a job failed five times).',
      metric: this.deadLetterQueue.metricApproximateNumberOfMessagesVisible({ period: fiveMinutes, statistic: 'Maximum' }),
      threshold: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
    });
    props.alarm('ExportsQueueAge', {
      alarmDescription: 'An export job has waited more than 30 minutes for a worker.',
      metric: this.queue.metricApproximateAgeOfOldestMessage({ period: fiveMinutes, statistic: 'Maximum' }),
      threshold: Duration.minutes(30).toSeconds(),
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
    });
  }
}
