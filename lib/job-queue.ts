import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { functionByName } from '../functions/topology.js';
import { acknowledge } from './nag.js';

export interface JobQueueProps {
  /** The topology function the queue feeds: a message stays invisible for its time limit and a minute. */
  worker: string;
  /** What a message is, for the nag acknowledgements ("the export queue"). */
  label: string;
  retention: Duration;
  /** Receives before a message goes to the dead-letter queue. */
  maxReceiveCount: number;
  /** The alarm when a message reaches the dead-letter queue. */
  failedAlarm: { id: string; description: string };
  /** An alarm when a job waits longer than this for a worker. */
  waitAlarm?: { id: string; description: string; after: Duration };
  /** The stack's alarm factory (actions to the alarm topic). */
  alarm: (id: string, props: cloudwatch.AlarmProps) => unknown;
}

/**
 * The queue of a job someone waits for (an export, an import): messages kept 4 days, five tries,
 * and alarms when a job failed five times or waited 30 minutes for a worker.
 */
function waitedFor(job: 'export' | 'import', worker: string): Omit<JobQueueProps, 'alarm'> {
  const Job = job[0]!.toUpperCase() + job.slice(1);
  return {
    worker,
    label: `the ${job} queue`,
    retention: Duration.days(4),
    maxReceiveCount: 5,
    failedAlarm: { id: `${Job}sDlqDepth`, description: `${Job} messages are waiting in the ${job} dead-letter queue (a job failed five times).` },
    waitAlarm: { id: `${Job}sQueueAge`, description: `An ${job} job has waited more than 30 minutes for a worker.`, after: Duration.minutes(30) },
  };
}

/**
 * The job queues, by the topology queue each is: its construct id (the prefix of its template
 * logical ids), its worker, its retention, receives before the dead-letter queue, and alarms.
 */
export const JOB_QUEUES = {
  exports: { id: 'Exports', ...waitedFor('export', 'exportWorker') },
  erasures: {
    id: 'Erasures',
    worker: 'erasureWorker',
    label: 'the erasure queue',
    retention: Duration.days(14),
    maxReceiveCount: 10,
    failedAlarm: { id: 'ErasuresDlqDepth', description: 'An erasure failed ten times: a person is not forgotten yet (contract §18).' },
  },
  indexBuilds: {
    id: 'IndexBuilds',
    worker: 'indexBuildWorker',
    label: 'the index-build queue',
    retention: Duration.days(14),
    maxReceiveCount: 10,
    failedAlarm: { id: 'IndexBuildsDlqDepth', description: 'An index build failed ten times: a custom field stays building (contract §17).' },
  },
} as const satisfies Record<string, Omit<JobQueueProps, 'alarm'> & { id: string }>;
export type JobQueueName = keyof typeof JOB_QUEUES;

/** The import queue, built inside the imports' construct with their bucket (lib/imports.ts). */
export const IMPORT_QUEUE = waitedFor('import', 'importWorker');

/** A job queue and its dead-letter queue. */
export interface JobQueueResources {
  queue: sqs.Queue;
  deadLetterQueue: sqs.Queue;
}

/**
 * A job queue in `scope` (constructs `Dlq` and `Queue`): the queue a topology worker reads, its
 * dead-letter queue, and the alarms on them. The queue's visibility follows the worker's time
 * limit in functions/topology.ts, so the two are written once. The imports' queue is built here
 * too, inside the imports' construct (lib/imports.ts).
 */
export function addJobQueue(scope: Construct, props: JobQueueProps): JobQueueResources {
  const worker = functionByName(props.worker);
  if (!worker) throw new Error(`no function ${props.worker} in the topology`);
  const queueDefaults = { encryption: sqs.QueueEncryption.SQS_MANAGED, enforceSSL: true } as const;
  const deadLetterQueue = new sqs.Queue(scope, 'Dlq', { ...queueDefaults, retentionPeriod: Duration.days(14) });
  acknowledge(deadLetterQueue, 'AwsSolutions-SQS3', `This is the dead-letter queue of ${props.label}.`);
  acknowledge(deadLetterQueue, 'Serverless-SQSRedrivePolicy', `This is the dead-letter queue of ${props.label}.`);
  const queue = new sqs.Queue(scope, 'Queue', {
    ...queueDefaults,
    // A message stays invisible while its job runs.
    visibilityTimeout: Duration.seconds(worker.timeoutSeconds).plus(Duration.minutes(1)),
    retentionPeriod: props.retention,
    deadLetterQueue: { queue: deadLetterQueue, maxReceiveCount: props.maxReceiveCount },
  });
  const fiveMinutes = Duration.minutes(5);
  props.alarm(props.failedAlarm.id, {
    alarmDescription: props.failedAlarm.description,
    metric: deadLetterQueue.metricApproximateNumberOfMessagesVisible({ period: fiveMinutes, statistic: 'Maximum' }),
    threshold: 1,
    comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    evaluationPeriods: 1,
  });
  if (props.waitAlarm) {
    props.alarm(props.waitAlarm.id, {
      alarmDescription: props.waitAlarm.description,
      metric: queue.metricApproximateAgeOfOldestMessage({ period: fiveMinutes, statistic: 'Maximum' }),
      threshold: props.waitAlarm.after.toSeconds(),
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
    });
  }
  return { queue, deadLetterQueue };
}

/** A job queue of its own construct (exports, erasures, index builds: JOB_QUEUES). */
export class JobQueue extends Construct {
  readonly queue: sqs.Queue;
  readonly deadLetterQueue: sqs.Queue;

  constructor(scope: Construct, id: string, props: JobQueueProps) {
    super(scope, id);
    ({ queue: this.queue, deadLetterQueue: this.deadLetterQueue } = addJobQueue(this, props));
  }
}
