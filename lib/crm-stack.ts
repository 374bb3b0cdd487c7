import { CfnOutput, CfnParameter, Duration, Stack, type StackProps, Tags } from 'aws-cdk-lib';
import * as apigw from 'aws-cdk-lib/aws-apigateway';
import * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaAuthorizer, HttpLambdaResponseType } from 'aws-cdk-lib/aws-apigatewayv2-authorizers';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as cwActions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsDlq, SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as snsSubscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { type Access, internalFunctions, type OperationEntry, operations } from '../functions/operations.js';
import { createTableInput, TABLE_DEFINITION } from '../shared/db/table.js';
import { DEFAULT_RATE_LIMIT } from '../shared/domain/rate-limit.js';
import { ApiFunction } from './api-function.js';
import { Imports } from './imports.js';
import { InboundEmail } from './inbound-email.js';
import { WebhookSweeper } from './webhook-sweeper.js';
import { CrmDashboard } from './dashboard.js';
import { acknowledge, NAG_REASONS } from './nag.js';
import { bindTable, grantSystemKeySeed } from './grants.js';
import { removalPolicy, type StageConfig } from './stage.js';

export interface CrmStackProps extends StackProps {
  stage: StageConfig;
}

type Need = NonNullable<OperationEntry['needs']>[number];
interface InternalEntry {
  entry: string;
  access: Access;
}

/** Timeouts that other settings are derived from. */
export const TIMEOUTS = {
  api: Duration.seconds(10),
  authorizer: Duration.seconds(5),
  stream: Duration.seconds(60),
  delivery: Duration.seconds(30),
} as const;

/** `contacts-list` → `ContactsList` (construct ids, hence stable logical ids). */
export const constructIdFor = (name: string) =>
  name
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((part) => part[0]!.toUpperCase() + part.slice(1))
    .join('');

/**
 * Extra grants of an operation. The registry's `needs` decides; a webhooks operation that
 * writes and says nothing gets the secrets key, because creating or updating an endpoint
 * encrypts its signing secret.
 */
export function needsOf(op: OperationEntry): readonly Need[] {
  if (op.needs) return op.needs;
  return op.family === 'webhooks' && op.access === 'write' && /-(create|update)$/.test(op.name) ? ['secrets-key'] : [];
}

/**
 * The whole service: one HTTP API route and one Lambda per registry entry, the single table
 * from TABLE_DEFINITION, the stream consumer, the webhook delivery queue and its worker.
 */
export class CrmStack extends Stack {
  readonly api: apigwv2.HttpApi;
  readonly apiStage: apigwv2.HttpStage;
  readonly table: dynamodb.Table;
  readonly deliveryQueue: sqs.Queue;
  readonly deliveryDlq: sqs.Queue;
  readonly streamFailures: sqs.Queue;
  readonly webhookSecretsKey: kms.Key;
  readonly alarmTopic: sns.Topic;
  /** Every Lambda of the stack by registry name (operations) or internal name. */
  readonly functions = new Map<string, ApiFunction>();

  constructor(scope: Construct, id: string, props: CrmStackProps) {
    super(scope, id, props);
    const { stage } = props;
    const removal = removalPolicy(stage);
    Tags.of(this).add('service', 'crm');
    Tags.of(this).add('stage', stage.name);

    // ---- Data ---------------------------------------------------------------------------
    this.table = buildTable(this, stage);

    this.webhookSecretsKey = new kms.Key(this, 'WebhookSecretsKey', {
      description: `crm ${stage.name}: encrypts webhook signing secrets`,
      enableKeyRotation: true,
      // The table keeps ciphertexts: a retained table needs its key.
      removalPolicy: removal,
      pendingWindow: Duration.days(stage.retainData ? 30 : 7),
    });

    // ---- Queues ---------------------------------------------------------------------------
    const queueDefaults = { encryption: sqs.QueueEncryption.SQS_MANAGED, enforceSSL: true } as const;
    this.deliveryDlq = new sqs.Queue(this, 'DeliveryDlq', { ...queueDefaults, retentionPeriod: Duration.days(14) });
    this.deliveryQueue = new sqs.Queue(this, 'DeliveryQueue', {
      ...queueDefaults,
      // AWS guidance for SQS event sources: at least 6× the function timeout.
      visibilityTimeout: Duration.seconds(TIMEOUTS.delivery.toSeconds() * 6),
      retentionPeriod: Duration.days(4),
      deadLetterQueue: { queue: this.deliveryDlq, maxReceiveCount: 5 },
    });
    this.streamFailures = new sqs.Queue(this, 'StreamFailures', { ...queueDefaults, retentionPeriod: Duration.days(14) });

    // ---- Functions ----------------------------------------------------------------------
    const internal: Partial<Record<string, InternalEntry>> = internalFunctions;
    const wired = new Set(['authorizer', 'fallback', 'stream', 'delivery', 'sweeper']);
    wired.add('inbound'); // lib/inbound-email.ts
    wired.add('importWorker'); // lib/imports.ts
    const unwired = Object.keys(internal).filter((name) => !wired.has(name));
    // Internal functions need their own event source and grants: fail loudly rather than skip one.
    if (unwired.length) throw new Error(`internal functions without stack wiring: ${unwired.join(', ')} (lib/crm-stack.ts)`);
    const fn = (name: string, entry: string, extra: Partial<ConstructorParameters<typeof ApiFunction>[2]> = {}) => {
      const created = new ApiFunction(this, `${constructIdFor(name)}Function`, {
        entry,
        description: `crm ${stage.name}: ${name}`,
        tracing: stage.tracing,
        logRetention: stage.logRetention,
        logRemovalPolicy: removal,
        logLevel: stage.logLevel,
        ...extra,
        environment: { CRM_STAGE: stage.name, CRM_ALLOW_INSECURE_WEBHOOKS: 'false', ...extra.environment },
      });
      this.functions.set(name, created);
      return created;
    };
    const grantNeeds = (target: lambda.Function, needs: readonly Need[]) => {
      if (needs.includes('queue')) {
        target.addEnvironment('DELIVERY_QUEUE_URL', this.deliveryQueue.queueUrl);
        this.deliveryQueue.grantSendMessages(target);
      }
      if (needs.includes('secrets-key')) {
        target.addEnvironment('WEBHOOK_SECRET_KEY_ID', this.webhookSecretsKey.keyId);
        this.webhookSecretsKey.grant(target, 'kms:Encrypt');
      }
      // webhooks-create decrypts the secret of its own stored idempotent result on a retry.
      if (needs.includes('secrets-open')) this.webhookSecretsKey.grant(target, 'kms:Decrypt');
    };

    // ---- API ------------------------------------------------------------------------------
    const authorizerFn = fn('authorizer', internalFunctions.authorizer.entry, { timeout: TIMEOUTS.authorizer });
    bindTable(authorizerFn, this.table, 'read');
    const authorizer = new HttpLambdaAuthorizer('BearerAuthorizer', authorizerFn, {
      responseTypes: [HttpLambdaResponseType.SIMPLE],
      identitySource: ['$request.header.Authorization'],
      // A decision is cached per Authorization header (so per token) for this long: a revoked
      // key keeps working for up to 60 s (see docs/deploy.md). The cached decision holds the
      // key's scopes and expiry, and every operation checks its own scope and the expiry
      // (shared/http/operation.ts), so one cached answer is safe for every route.
      resultsCacheTtl: Duration.seconds(60),
    });

    // The fallback only answers 404/405 from the registry: it never touches the table.
    const fallbackFn = fn('fallback', internalFunctions.fallback.entry);

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
    for (const op of operations) {
      const opFn = fn(op.name, op.entry, { timeout: TIMEOUTS.api, environment: { CRM_RATE_LIMIT: rateLimit.valueAsString } });
      bindTable(opFn, this.table, op.access);
      if (op.access === 'read') grantSystemKeySeed(opFn, this.table);
      grantNeeds(opFn, needsOf(op));
      this.api.addRoutes({
        path: `/api/${op.name}`,
        methods: [apigwv2.HttpMethod.POST],
        integration: new HttpLambdaIntegration(`${constructIdFor(op.name)}Integration`, opFn),
        authorizer,
      });
    }

    // Everything else (unknown operation, other method): the contract's 404/405 envelope, no auth.
    new apigwv2.HttpRoute(this, 'DefaultRoute', {
      httpApi: this.api,
      routeKey: apigwv2.HttpRouteKey.DEFAULT,
      integration: new HttpLambdaIntegration('FallbackIntegration', fallbackFn),
    });

    // ---- Stream consumer ----------------------------------------------------------------
    const streamFn = fn('stream', internalFunctions.stream.entry, { timeout: TIMEOUTS.stream });
    bindTable(streamFn, this.table, internalFunctions.stream.access);
    grantNeeds(streamFn, ['queue']);
    streamFn.addEventSource(
      new DynamoEventSource(this.table, {
        startingPosition: lambda.StartingPosition.TRIM_HORIZON,
        batchSize: 100,
        maxBatchingWindow: Duration.seconds(1),
        bisectBatchOnError: true,
        retryAttempts: 10,
        reportBatchItemFailures: true,
        onFailure: new SqsDlq(this.streamFailures),
      }),
    );

    // ---- Webhook delivery (only once the delivery worker is in the registry) --------------
    const delivery = internal.delivery;
    if (delivery) {
      const deliveryFn = fn('delivery', delivery.entry, { timeout: TIMEOUTS.delivery });
      bindTable(deliveryFn, this.table, delivery.access);
      // Sends too: a failed attempt re-enqueues itself with a delay.
      grantNeeds(deliveryFn, ['queue']);
      deliveryFn.addEnvironment('WEBHOOK_SECRET_KEY_ID', this.webhookSecretsKey.keyId);
      this.webhookSecretsKey.grantDecrypt(deliveryFn);
      deliveryFn.addEventSource(new SqsEventSource(this.deliveryQueue, { batchSize: 10, reportBatchItemFailures: true, maxConcurrency: 10 }));
    }
    if (internal.sweeper) new WebhookSweeper(this, 'WebhookSweeper', { entry: internal.sweeper, fn, table: this.table, deliveryQueue: this.deliveryQueue });

    if (internal.inbound) new InboundEmail(this, 'InboundEmail', { entry: internal.inbound, fn, table: this.table, removalPolicy: removal, functions: this.functions });

    // ---- Alarms ---------------------------------------------------------------------------
    this.alarmTopic = new sns.Topic(this, 'AlarmTopic', { displayName: `crm ${stage.name} alarms`, enforceSSL: true });
    if (stage.alarmEmail) this.alarmTopic.addSubscription(new snsSubscriptions.EmailSubscription(stage.alarmEmail));
    const notify = new cwActions.SnsAction(this.alarmTopic);
    const alarm = (alarmId: string, props: cloudwatch.AlarmProps) => {
      const created = new cloudwatch.Alarm(this, alarmId, { treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING, ...props });
      created.addAlarmAction(notify);
      return created;
    };

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

    // One alarm per function: crashes and timeouts (handled errors are envelopes, not Errors).
    for (const [name, target] of this.functions) {
      alarm(`${constructIdFor(name)}Errors`, {
        alarmDescription: `Lambda ${name}: invocation errors (crash or timeout).`,
        metric: target.metricErrors({ period: fiveMinutes, statistic: 'Sum' }),
        threshold: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
      });
    }

    for (const [alarmId, queue] of [
      ['DeliveryDlqDepth', this.deliveryDlq],
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

    alarm('StreamIteratorAge', {
      alarmDescription: 'The stream consumer is more than 5 minutes behind the table.',
      metric: streamFn.metric('IteratorAge', { period: Duration.minutes(1), statistic: 'Maximum' }),
      threshold: Duration.minutes(5).toMilliseconds(),
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 5,
      datapointsToAlarm: 3,
    });

    // ---- Imports (lib/imports.ts): bucket, queue + DLQ, worker, grants of the imports-* operations, alarms
    if (internal.importWorker) new Imports(this, 'Imports', { entry: internal.importWorker, fn, table: this.table, removalPolicy: removal, functions: this.functions, operations, alarmTopic: this.alarmTopic });

    // ---- Outputs --------------------------------------------------------------------------
    new CfnOutput(this, 'ApiUrl', { value: this.apiStage.url, description: 'Base URL: POST <ApiUrl>api/<operation>' });
    new CfnOutput(this, 'TableName', { value: this.table.tableName, description: 'TABLE_NAME for `npm run token`' });
    new CfnOutput(this, 'DeliveryQueueUrl', { value: this.deliveryQueue.queueUrl });
    new CfnOutput(this, 'AlarmTopicArn', { value: this.alarmTopic.topicArn, description: 'Subscribe to receive alarms' });

    // ---- Operations -------------------------------------------------------------------------
    new CrmDashboard(this, 'Dashboard', { stage, api: this.api, functions: this.functions, queues: { delivery: this.deliveryQueue, deliveryDlq: this.deliveryDlq, streamFailures: this.streamFailures }, table: this.table });

    // ---- cdk-nag: findings that are by design (lib/nag.ts; per-function ones in ApiFunction) --
    acknowledge(this.node.findChild('DefaultRoute'), 'AwsSolutions-APIG4', NAG_REASONS.fallbackRoute);
    acknowledge(this.streamFailures, 'AwsSolutions-SQS3', NAG_REASONS.failureQueueIsDlq);
    for (const queue of [this.streamFailures, this.deliveryDlq]) acknowledge(queue, 'Serverless-SQSRedrivePolicy', NAG_REASONS.failureQueueIsDlq);
    acknowledge(streamFn.role!, 'AwsSolutions-IAM5[Resource::*]', NAG_REASONS.streamListStreams);
    const deliveryFunction = this.functions.get('delivery');
    if (deliveryFunction) acknowledge(deliveryFunction, 'Serverless-LambdaEventSourceMappingDestination', NAG_REASONS.sqsMappingDestination);
  }
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
