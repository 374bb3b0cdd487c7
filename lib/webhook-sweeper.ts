import { Duration } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { Access } from '../functions/operations.js';
import type { ApiFunction } from './api-function.js';
import { bindTable } from './grants.js';
import { acknowledge } from './nag.js';

export interface WebhookSweeperProps {
  /** The registry entry (`internalFunctions.sweeper`). */
  entry: { entry: string; access: Access };
  /** The stack's function factory (defaults, alarms and dashboard registration). */
  fn: (name: string, entry: string, extra?: Partial<ConstructorParameters<typeof ApiFunction>[2]>) => ApiFunction;
  table: dynamodb.ITable;
  /** The delivery queue the sweeper re-enqueues into. */
  deliveryQueue: sqs.IQueue;
  /** @default 1 minute */
  every?: Duration;
}

/**
 * The webhook delivery sweeper deployed (shared/webhooks/sweeper.ts): a Lambda run by an
 * EventBridge schedule that re-enqueues pending deliveries whose queue message is gone (for
 * instance a message that went to the delivery DLQ). It reads only the sweeper's sparse due-time
 * index (GSI1 queries, no Scan) and sends to the delivery queue.
 */
export class WebhookSweeper extends Construct {
  readonly function: ApiFunction;
  readonly rule: events.Rule;
  /** Where schedule events go that could not be delivered or whose invocation failed every retry. */
  readonly deadLetterQueue: sqs.Queue;

  constructor(scope: Construct, id: string, props: WebhookSweeperProps) {
    super(scope, id);
    this.deadLetterQueue = new sqs.Queue(this, 'Dlq', { encryption: sqs.QueueEncryption.SQS_MANAGED, enforceSSL: true, retentionPeriod: Duration.days(14) });
    const reason = 'Dead-letter queue of the scheduled sweeper\'s asynchronous invocations: it has no DLQ of its own (a missed sweep is redone by the next one a minute later).';
    acknowledge(this.deadLetterQueue, 'AwsSolutions-SQS3', reason);
    acknowledge(this.deadLetterQueue, 'Serverless-SQSRedrivePolicy', reason);

    this.function = props.fn('sweeper', props.entry.entry, { timeout: Duration.seconds(60), deadLetterQueue: this.deadLetterQueue });
    bindTable(this.function, props.table, props.entry.access);
    this.function.addEnvironment('DELIVERY_QUEUE_URL', props.deliveryQueue.queueUrl);
    props.deliveryQueue.grantSendMessages(this.function);

    this.rule = new events.Rule(this, 'Schedule', {
      description: 'Re-enqueue overdue pending webhook deliveries',
      schedule: events.Schedule.rate(props.every ?? Duration.minutes(1)),
      targets: [new targets.LambdaFunction(this.function, { retryAttempts: 2, maxEventAge: Duration.minutes(5), deadLetterQueue: this.deadLetterQueue })],
    });
  }
}
