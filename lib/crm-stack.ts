import { CfnOutput, CfnParameter, Duration, Stack, type StackProps, Tags } from 'aws-cdk-lib';
import * as apigw from 'aws-cdk-lib/aws-apigateway';
import * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as cwActions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as snsSubscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { FUNCTIONS, type FunctionSpec, type QueueName } from '../functions/topology.js';
import { QUEUES } from '../shared/config/bindings.js';
import { CONTROL_TABLE_DEFINITION, createControlTableInput } from '../shared/db/control.js';
import { createTableInput, TABLE_DEFINITION } from '../shared/db/table.js';
import { DEFAULT_RATE_LIMIT } from '../shared/domain/rate-limit.js';
import type { ApiFunction } from './api-function.js';
import type { ServiceResources } from './bindings.js';
import { CrmDashboard } from './dashboard.js';
import { constructIdFor, FunctionGroup, type TriggerTargets } from './function-group.js';
import { Imports } from './imports.js';
import { JOB_QUEUES, JobQueue, type JobQueueName } from './job-queue.js';
import { InboundEmail } from './inbound-email.js';
import { acknowledge, NAG_REASONS } from './nag.js';
import { removalPolicy, type StageConfig } from './stage.js';

export { constructIdFor };

export interface CrmStackProps extends StackProps {
  stage: StageConfig;
  /** The functions to deploy (default: functions/topology.ts; the growth test passes a bigger one). */
  topology?: readonly FunctionSpec[];
}

/**
 * The whole service. This (parent) stack holds what is shared: the table from TABLE_DEFINITION,
 * the secrets key, the queues, the buckets, the HTTP API with its authorizer, the alarm topic,
 * the service-wide alarms and the dashboard. Every function of the topology lives in a nested
 * stack of its group (lib/function-group.ts): one route, Lambda, role, log group and alarm each.
 */
export class CrmStack extends Stack {
  readonly api: apigwv2.HttpApi;
  readonly apiStage: apigwv2.HttpStage;
  readonly table: dynamodb.Table;
  /** Items written per request that are not records (rate-limit buckets, key use, idempotency records): no stream. */
  readonly controlTable: dynamodb.Table;
  readonly deliveryQueue: sqs.Queue;
  readonly deliveryDlq: sqs.Queue;
  readonly streamFailures: sqs.Queue;
  readonly changesQueue: sqs.Queue;
  readonly changesDlq: sqs.Queue;
  readonly webhookSecretsKey: kms.Key;
  readonly alarmTopic: sns.Topic;
  /** Every Lambda of the service by topology name, whichever nested stack holds it. */
  readonly functions = new Map<string, ApiFunction>();
  /** The nested stacks of functions by group name. */
  readonly groups = new Map<string, FunctionGroup>();
  readonly imports: Imports;

  constructor(scope: Construct, id: string, props: CrmStackProps) {
    super(scope, id, props);
    const { stage } = props;
    const removal = removalPolicy(stage);
    Tags.of(this).add('service', 'crm');
    Tags.of(this).add('stage', stage.name);

    // ---- Data ---------------------------------------------------------------------------
    this.table = buildTable(this, stage);
    this.controlTable = buildControlTable(this, stage);

    this.webhookSecretsKey = new kms.Key(this, 'WebhookSecretsKey', {
      description: `crm ${stage.name}: encrypts webhook signing secrets`,
      enableKeyRotation: true,
      // The table keeps ciphertexts: a retained table needs its key.
      removalPolicy: removal,
      pendingWindow: Duration.days(stage.retainData ? 30 : 7),
    });

    // ---- Alarms go to one topic -------------------------------------------------------------
    this.alarmTopic = new sns.Topic(this, 'AlarmTopic', { displayName: `crm ${stage.name} alarms`, enforceSSL: true });
    if (stage.alarmEmail) this.alarmTopic.addSubscription(new snsSubscriptions.EmailSubscription(stage.alarmEmail));
    const notify = new cwActions.SnsAction(this.alarmTopic);
    const alarm = (alarmId: string, alarmProps: cloudwatch.AlarmProps) => {
      const created = new cloudwatch.Alarm(this, alarmId, { treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING, ...alarmProps });
      created.addAlarmAction(notify);
      return created;
    };

    // ---- Queues ---------------------------------------------------------------------------
    const queueDefaults = { encryption: sqs.QueueEncryption.SQS_MANAGED, enforceSSL: true } as const;
    this.deliveryDlq = new sqs.Queue(this, 'DeliveryDlq', { ...queueDefaults, retentionPeriod: Duration.days(14) });
    this.deliveryQueue = new sqs.Queue(this, 'DeliveryQueue', {
      ...queueDefaults,
      // AWS guidance for SQS event sources: at least 6× the function timeout.
      visibilityTimeout: Duration.seconds(consumerTimeout(props.topology ?? FUNCTIONS, 'delivery') * 6),
      retentionPeriod: Duration.days(4),
      deadLetterQueue: { queue: this.deliveryDlq, maxReceiveCount: 5 },
    });
    this.streamFailures = new sqs.Queue(this, 'StreamFailures', { ...queueDefaults, retentionPeriod: Duration.days(14) });
    // Record changes, one message group per account (QUEUES: fifo; shared/stream/route.ts):
    // high-throughput FIFO (deduplication and throughput per group).
    const fifo = { fifo: true, deduplicationScope: sqs.DeduplicationScope.MESSAGE_GROUP, fifoThroughputLimit: sqs.FifoThroughputLimit.PER_MESSAGE_GROUP_ID } as const;
    this.changesDlq = new sqs.Queue(this, 'ChangesDlq', { ...queueDefaults, ...fifo, retentionPeriod: Duration.days(14) });
    this.changesQueue = new sqs.Queue(this, 'ChangesQueue', {
      ...queueDefaults,
      ...(QUEUES.changes === 'fifo' ? fifo : {}),
      visibilityTimeout: Duration.seconds(consumerTimeout(props.topology ?? FUNCTIONS, 'changes') * 6),
      retentionPeriod: Duration.days(4),
      deadLetterQueue: { queue: this.changesDlq, maxReceiveCount: 10 },
    });

    // ---- Imports and inbound mail: buckets and queues (their functions are in the topology)
    const imports = new Imports(this, 'Imports', { removalPolicy: removal, alarm: (id, p) => alarm(id, p) });
    this.imports = imports;
    const inbound = new InboundEmail(this, 'InboundEmail', { removalPolicy: removal });
    // --- the job queues (exports §16, erasures §18, index builds §17), declared in lib/job-queue.ts
    const jobs = Object.fromEntries(Object.entries(JOB_QUEUES).map(([name, { id, ...spec }]) => [name, new JobQueue(this, id, { ...spec, alarm }).queue])) as Record<JobQueueName, sqs.Queue>;

    // ---- API ------------------------------------------------------------------------------
    this.api = new apigwv2.HttpApi(this, 'Api', {
      apiName: `crm-${stage.name}`,
      description: `crm ${stage.name}: POST /api/<operation>`,
      createDefaultStage: false,
    });
    const accessLogs = new logs.LogGroup(this, 'ApiAccessLogs', { retention: stage.logRetention, removalPolicy: removal });
    this.apiStage = new apigwv2.HttpStage(this, 'ApiStage', {
      httpApi: this.api,
      stageName: '$default',
      autoDeploy: true,
      throttle: stage.throttle,
      accessLogSettings: {
        destination: new apigwv2.LogGroupLogDestination(accessLogs),
        // No headers: the Authorization header never reaches the logs.
        format: apigw.AccessLogFormat.custom(
          JSON.stringify({
            requestId: '$context.requestId',
            time: '$context.requestTime',
            ip: '$context.identity.sourceIp',
            method: '$context.httpMethod',
            path: '$context.path',
            routeKey: '$context.routeKey',
            status: '$context.status',
            latencyMs: '$context.responseLatency',
            integrationError: '$context.integrationErrorMessage',
            authorizerError: '$context.authorizer.error',
          }),
        ),
      },
    });

    // Per-account rate limit of every operation (contract §14, shared/domain/rate-limit.ts):
    // `cdk deploy --parameters RateLimit=50,100` (or 0: off). The stage throttle above stays the outer guard.
    const rateLimit = new CfnParameter(this, 'RateLimit', {
      type: 'String',
      default: DEFAULT_RATE_LIMIT,
      allowedPattern: '^(0|[0-9]{1,7}(\\.[0-9]+)?,[0-9]{1,7})$',
      description: 'CRM_RATE_LIMIT: per-account token bucket "rate,burst" (requests per second, bucket size), or 0 to turn it off',
    });

    // ---- Functions: the topology (functions/topology.ts), one nested stack per group ----------
    const queues: Record<QueueName, sqs.IQueue> = { delivery: this.deliveryQueue, imports: imports.queue, ...jobs, changes: this.changesQueue };
    const resources: ServiceResources = {
      rateLimit: rateLimit.valueAsString,
      table: this.table,
      controlTable: this.controlTable,
      queues,
      secretsKey: this.webhookSecretsKey,
      importsBucket: imports.bucket,
      importsBucketArn: imports.bucketArn,
      nagNames: {
        importsBucket: `arn:<AWS::Partition>:s3:::crm-imports-<AWS::AccountId>-<AWS::Region>-${imports.node.addr.slice(0, 8)}`,
        inboundBucket: `arn:<AWS::Partition>:s3:::crm-inbound-<AWS::AccountId>-<AWS::Region>-${inbound.node.addr.slice(0, 8)}`,
      },
      inbound: { bucketName: inbound.bucketName, bucketArn: inbound.bucketArn, domain: inbound.domain },
    };
    const targets: TriggerTargets = {
      api: this.api,
      table: this.table,
      queues,
      streamFailures: this.streamFailures,
      inboundEvents: inbound.queue,
    };
    const topology = props.topology ?? FUNCTIONS;
    const group = (name: string, specs: readonly FunctionSpec[]) => {
      const created = new FunctionGroup(this, `${constructIdFor(name)}Functions`, { stage, removal, specs, resources, triggers: targets, alarmTopic: this.alarmTopic, description: `crm ${stage.name}: ${name} functions` });
      this.groups.set(name, created);
      for (const [fnName, fn] of created.functions) this.functions.set(fnName, fn);
      return created;
    };
    // The edge first: the authorizer every route uses lives there.
    const edge = group('edge', topology.filter((f) => f.group === 'edge'));
    const authorizerFn = edge.functions.get('authorizer');
    if (!authorizerFn) throw new Error('the topology has no authorizer function');
    const authorizer = new apigwv2.HttpAuthorizer(this, 'BearerAuthorizer', {
      httpApi: this.api,
      authorizerName: 'BearerAuthorizer',
      type: apigwv2.HttpAuthorizerType.LAMBDA,
      identitySource: ['$request.header.Authorization'],
      authorizerUri: `arn:${this.partition}:apigateway:${this.region}:lambda:path/2015-03-31/functions/${authorizerFn.functionArn}/invocations`,
      enableSimpleResponses: true,
      payloadFormatVersion: apigwv2.AuthorizerPayloadVersion.VERSION_2_0,
      // A decision is cached per Authorization header for this long: a revoked token keeps
      // working for up to 60 s after `token revoke` (see docs/deploy.md).
      resultsCacheTtl: Duration.seconds(60),
    });
    new lambda.CfnPermission(this, 'AuthorizerInvoke', {
      action: 'lambda:InvokeFunction',
      functionName: authorizerFn.functionArn,
      principal: 'apigateway.amazonaws.com',
      sourceArn: `arn:${this.partition}:execute-api:${this.region}:${this.account}:${this.api.apiId}/authorizers/${authorizer.authorizerId}`,
    });
    targets.authorizer = { bind: () => ({ authorizerId: authorizer.authorizerId, authorizationType: 'CUSTOM' }) };
    for (const [name, specs] of groupsOf(topology.filter((f) => f.group !== 'edge'))) group(name, specs);

    // ---- Alarms ---------------------------------------------------------------------------
    const fiveMinutes = Duration.minutes(5);
    alarm('Api5xxRate', {
      alarmDescription: 'More than 5% of API requests answered 5xx (evaluated from 20 requests per 5 minutes on).',
      metric: new cloudwatch.MathExpression({
        expression: 'IF(requests >= 20, 100 * errors / requests, 0)',
        usingMetrics: {
          errors: this.api.metricServerError({ period: fiveMinutes, statistic: 'Sum' }),
          requests: this.api.metricCount({ period: fiveMinutes, statistic: 'Sum' }),
        },
        period: fiveMinutes,
        label: '5xx rate (%)',
      }),
      threshold: 5,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 2,
      datapointsToAlarm: 2,
    });

    for (const [alarmId, queue] of [
      ['DeliveryDlqDepth', this.deliveryDlq],
      ['ChangesDlqDepth', this.changesDlq],
      ['StreamFailuresDepth', this.streamFailures],
    ] as const) {
      alarm(alarmId, {
        alarmDescription: 'Messages are waiting in a dead-letter queue.',
        metric: queue.metricApproximateNumberOfMessagesVisible({ period: fiveMinutes, statistic: 'Maximum' }),
        threshold: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
      });
    }

    const streamFn = this.functions.get('stream');
    if (streamFn) {
      // The stream only routes (shared/stream/route.ts): a minute behind is far past search's and webhooks' 2 s.
      alarm('StreamIteratorAge', {
        alarmDescription: 'The stream router is more than a minute behind the table.',
        metric: streamFn.metric('IteratorAge', { period: Duration.minutes(1), statistic: 'Maximum' }),
        threshold: Duration.minutes(1).toMilliseconds(),
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 5,
        datapointsToAlarm: 3,
      });
    }
    // Each queue's backlog: the age of its oldest message (a job queue's message waits while its job runs: longer limits).
    for (const [name, queue] of Object.entries(targets.queues) as [QueueName, sqs.IQueue][]) {
      const minutes = name === 'imports' || name === 'exports' ? 30 : 5;
      alarm(`${constructIdFor(name)}QueueOldestMessage`, {
        alarmDescription: `The ${name} queue's oldest message waited more than ${minutes} minutes.`,
        metric: queue.metricApproximateAgeOfOldestMessage({ period: Duration.minutes(1), statistic: 'Maximum' }),
        threshold: minutes * 60,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 5,
        datapointsToAlarm: 3,
      });
    }
    // A stuck consumer: it takes messages but finishes none (every batch fails, times out or hangs),
    // so messages stay in flight and none is deleted. Per minute: 1 when messages were in flight and
    // none was deleted, for longer than any batch of the queue's worker may run (`stallMinutes`).
    const oneMinute = Duration.minutes(1);
    for (const [name, queue] of Object.entries(targets.queues) as [QueueName, sqs.IQueue][]) {
      const consumer = consumerOf(topology, name);
      const minutes = stallMinutes(consumer.timeoutSeconds);
      alarm(`${constructIdFor(name)}QueueStalled`, {
        alarmDescription:
          `The ${name} queue is stalled: its consumer (the ${consumer.name} function) takes messages but finishes none. ` +
          `For ${minutes} minutes in a row, messages were in flight (ApproximateNumberOfMessagesNotVisible > 0) and none was deleted (NumberOfMessagesDeleted = 0), ` +
          `longer than any batch may run (time limit ${consumer.timeoutSeconds} s): ${STALLED[name]} ` +
          `Look at the function's errors, duration and log group (every batch failing, timing out or hanging).`,
        metric: new cloudwatch.MathExpression({
          expression: STALL_EXPRESSION,
          usingMetrics: {
            inflight: queue.metricApproximateNumberOfMessagesNotVisible({ period: oneMinute, statistic: 'Maximum' }),
            deleted: queue.metricNumberOfMessagesDeleted({ period: oneMinute, statistic: 'Sum' }),
          },
          period: oneMinute,
          label: `${name}: in flight, none deleted`,
        }),
        threshold: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: minutes,
        datapointsToAlarm: minutes,
      });
    }

    // ---- Outputs --------------------------------------------------------------------------
    new CfnOutput(this, 'ApiUrl', { value: this.apiStage.url, description: 'Base URL: POST <ApiUrl>api/<operation>' });
    new CfnOutput(this, 'TableName', { value: this.table.tableName, description: 'TABLE_NAME for `npm run token`' });
    new CfnOutput(this, 'ControlTableName', { value: this.controlTable.tableName, description: '--control for `npm run move-derived-items` (docs/deploy.md, "Upgrading a stack")' });
    new CfnOutput(this, 'DeliveryQueueUrl', { value: this.deliveryQueue.queueUrl });
    new CfnOutput(this, 'AlarmTopicArn', { value: this.alarmTopic.topicArn, description: 'Subscribe to receive alarms' });
    new CfnOutput(this, 'InboundRuleSetName', { value: inbound.ruleSet.receiptRuleSetName, description: 'Activate it once: aws ses set-active-receipt-rule-set --rule-set-name <this>' });

    // ---- Operations -------------------------------------------------------------------------
    new CrmDashboard(this, 'Dashboard', { stage, api: this.api, functions: this.functions, queues: { delivery: this.deliveryQueue, deliveryDlq: this.deliveryDlq, streamFailures: this.streamFailures, byName: targets.queues }, table: this.table, controlTable: this.controlTable });

    // ---- cdk-nag: findings that are by design (lib/nag.ts; per-function ones in ApiFunction) --
    acknowledge(this.streamFailures, 'AwsSolutions-SQS3', NAG_REASONS.failureQueueIsDlq);
    acknowledge(this.changesDlq, 'AwsSolutions-SQS3', NAG_REASONS.failureQueueIsDlq);
    for (const queue of [this.streamFailures, this.deliveryDlq, this.changesDlq]) acknowledge(queue, 'Serverless-SQSRedrivePolicy', NAG_REASONS.failureQueueIsDlq);
  }
}

/**
 * The nested stacks: one per group of the topology, a group of more than MAX_PER_GROUP
 * functions split in parts (`contacts`, `contacts-2`…), so no template grows past about
 * 8 × MAX_PER_GROUP resources however many operations a family gets.
 */
export const MAX_PER_GROUP = 30;

/** The function a queue triggers. */
export function consumerOf(topology: readonly FunctionSpec[], queue: QueueName): FunctionSpec {
  const consumer = topology.find((f) => f.trigger.kind === 'queue' && f.trigger.queue === queue);
  if (!consumer) throw new Error(`no function consumes the ${queue} queue`);
  return consumer;
}

/** The time limit of the function a queue triggers (queue visibility timeouts derive from it). */
export function consumerTimeout(topology: readonly FunctionSpec[], queue: QueueName): number {
  return consumerOf(topology, queue).timeoutSeconds;
}

/**
 * A queue's stall, per 1-minute period: 1 when messages were in flight (taken by the consumer)
 * and none was deleted (finished), else 0. A missing datapoint counts as none (an idle queue
 * has nothing in flight, so it stays 0).
 */
export const STALL_EXPRESSION = 'IF(FILL(inflight, 0) > 0 AND FILL(deleted, 0) == 0, 1, 0)';

/**
 * Minutes of stall before the alarm: longer than any batch of the consumer may hold its messages
 * (its time limit), and than a job queue's message whose job another worker holds stays
 * invisible (the time limit and a minute: lib/job-queue.ts), with two minutes for the metrics'
 * lag; at least 5. The changes and delivery queues (batches of 2 minutes and 30 s at most): 5;
 * the job queues (15 minutes): 18.
 */
export const stallMinutes = (timeoutSeconds: number): number => Math.max(5, Math.ceil(timeoutSeconds / 60) + 3);

/** What waits while a queue is stalled (its stall alarm's description). */
const STALLED: Record<QueueName, string> = {
  changes: 'record changes wait, so search entries, the change log, fan-out and webhook deliveries stop following writes (the stream router keeps routing into the queue).',
  delivery: 'webhook deliveries wait unsent.',
  imports: 'import jobs do not progress.',
  exports: 'export jobs do not progress.',
  erasures: 'erasures (contract §18) do not progress.',
  indexBuilds: 'index builds of custom fields (contract §17) do not progress.',
};

export function groupsOf(specs: readonly FunctionSpec[]): Map<string, FunctionSpec[]> {
  const byGroup = new Map<string, FunctionSpec[]>();
  for (const spec of specs) byGroup.set(spec.group, [...(byGroup.get(spec.group) ?? []), spec]);
  const out = new Map<string, FunctionSpec[]>();
  for (const [name, list] of byGroup) {
    for (let i = 0; i < list.length; i += MAX_PER_GROUP) out.set(i === 0 ? name : `${name}-${i / MAX_PER_GROUP + 1}`, list.slice(i, i + MAX_PER_GROUP));
  }
  return out;
}

/** The table exactly as shared/db/table.ts declares it (via the same CreateTable input the local runner uses). */
function buildTable(scope: Construct, stage: StageConfig): dynamodb.Table {
  const input = createTableInput('crm');
  const attributeType = (name: string): dynamodb.AttributeType => {
    const definition = input.AttributeDefinitions.find((attr) => attr.AttributeName === name);
    if (!definition) throw new Error(`table definition: no attribute type for ${name}`);
    return { S: dynamodb.AttributeType.STRING, N: dynamodb.AttributeType.NUMBER, B: dynamodb.AttributeType.BINARY }[definition.AttributeType];
  };
  const keyOf = (schema: ReadonlyArray<{ AttributeName: string; KeyType: 'HASH' | 'RANGE' }>, type: 'HASH' | 'RANGE') => {
    const key = schema.find((k) => k.KeyType === type);
    return key ? { name: key.AttributeName, type: attributeType(key.AttributeName) } : undefined;
  };
  const partitionKey = keyOf(input.KeySchema, 'HASH');
  if (!partitionKey) throw new Error('table definition: no partition key');

  const table = new dynamodb.Table(scope, 'Table', {
    partitionKey,
    sortKey: keyOf(input.KeySchema, 'RANGE'),
    billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
    pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
    stream: dynamodb.StreamViewType[input.StreamSpecification.StreamViewType],
    encryption: dynamodb.TableEncryption.AWS_MANAGED,
    timeToLiveAttribute: TABLE_DEFINITION.ttlAttribute,
    deletionProtection: stage.retainData,
    removalPolicy: removalPolicy(stage),
  });
  for (const index of input.GlobalSecondaryIndexes) {
    table.addGlobalSecondaryIndex({
      indexName: index.IndexName,
      partitionKey: keyOf(index.KeySchema, 'HASH')!,
      sortKey: keyOf(index.KeySchema, 'RANGE'),
      projectionType: dynamodb.ProjectionType[index.Projection.ProjectionType],
    });
  }
  return table;
}

/** The control table as shared/db/control.ts declares it: the same keys, an expiry attribute, no stream, no index. */
function buildControlTable(scope: Construct, stage: StageConfig): dynamodb.Table {
  const input = createControlTableInput('crm-control');
  const keyOf = (type: 'HASH' | 'RANGE') => {
    const name = input.KeySchema.find((k) => k.KeyType === type)!.AttributeName;
    return { name, type: dynamodb.AttributeType.STRING };
  };
  return new dynamodb.Table(scope, 'ControlTable', {
    partitionKey: keyOf('HASH'),
    sortKey: keyOf('RANGE'),
    billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
    pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
    encryption: dynamodb.TableEncryption.AWS_MANAGED,
    timeToLiveAttribute: CONTROL_TABLE_DEFINITION.ttlAttribute,
    deletionProtection: stage.retainData,
    removalPolicy: removalPolicy(stage),
  });
}
