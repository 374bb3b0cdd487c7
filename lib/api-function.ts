import * as path from 'node:path';
import { Duration, type RemovalPolicy, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { LogLevel, NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { METRICS_NAMESPACE, METRICS_SERVICE } from '../shared/observability/names.js';
import { LAMBDA_BUNDLE } from './bundling.js';
import { FUNCTIONS_DIR, REPO_ROOT } from './paths.js';

/** The one Lambda runtime of the service (the test asserts nodejs22.x or newer on every function). */
export const RUNTIME = lambda.Runtime.NODEJS_24_X;

/**
 * ESM output has no `require`; a few CommonJS dependencies (bundled from node_modules) still call
 * `require('node:…')` for built-ins, which esbuild turns into "Dynamic require is not supported".
 * This shim gives them a real `require`. The alias avoids clashing with names in the bundle.
 */

export interface ApiFunctionProps {
  /** Handler module relative to functions/ (as in the registry), exporting `handler`. */
  entry: string;
  description?: string;
  /** @default 10 seconds (API functions; the HTTP API integration limit is 30 s) */
  timeout?: Duration;
  /** @default 512 */
  memorySize?: number;
  environment?: Record<string, string>;
  /** X-Ray active tracing (Powertools Tracer in the code). @default true */
  tracing?: boolean;
  /**
   * Only for functions invoked asynchronously (EventBridge, S3, SNS…): where failed events go.
   * Without it the function is taken to be invoked synchronously (API Gateway) or by an event
   * source mapping, for which a Lambda dead-letter queue never applies (cdk-nag is told so).
   */
  deadLetterQueue?: sqs.IQueue;
  logRetention: logs.RetentionDays;
  /** Removal policy of the function's log group. */
  logRemovalPolicy: RemovalPolicy;
  /** POWERTOOLS_LOG_LEVEL. @default 'INFO' */
  logLevel?: 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';
}

/**
 * Every Lambda of the service, with its defaults in one place (like Powertools'
 * FunctionWithLogGroup): the stack only says which handler and which extra environment.
 *
 * Defaults every function inherits (new functions elsewhere in lib/ get them by using this class):
 * - its own log group (retention, removal policy) and an execution role whose only logging
 *   permission is writing to that log group (no AWSLambdaBasicExecutionRole, which grants
 *   `logs:*` on every log group of the account);
 * - X-Ray active tracing and the Powertools settings (service name, log level, metrics
 *   namespace): shared/observability/ and shared/http/logger.ts read them;
 * - cdk-nag acknowledgements that hold for every such function, each with its reason.
 *
 * Bundling runs the project's own esbuild (a devDependency) on the host, so synth needs no
 * Docker; `forceDockerBundling` stays false and NodejsFunction only falls back to Docker when
 * esbuild cannot be found.
 */
export class ApiFunction extends NodejsFunction {
  constructor(scope: Construct, id: string, props: ApiFunctionProps) {
    const logGroup = new logs.LogGroup(scope, `${id}Logs`, {
      retention: props.logRetention,
      removalPolicy: props.logRemovalPolicy,
    });
    const role = new iam.Role(scope, `${id}Role`, {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: `${id}: writes its own log group; other grants are added by the stack`,
      inlinePolicies: {
        OwnLogGroup: new iam.PolicyDocument({
          statements: [new iam.PolicyStatement({ actions: ['logs:CreateLogStream', 'logs:PutLogEvents'], resources: [logGroup.logGroupArn] })],
        }),
      },
    });
    const tracing = props.tracing ?? true;
    super(scope, id, {
      entry: path.join(FUNCTIONS_DIR, props.entry),
      handler: 'handler',
      description: props.description,
      runtime: RUNTIME,
      architecture: lambda.Architecture.ARM_64,
      memorySize: props.memorySize ?? 512,
      timeout: props.timeout ?? Duration.seconds(10),
      tracing: tracing ? lambda.Tracing.ACTIVE : lambda.Tracing.DISABLED,
      logGroup,
      role,
      ...(props.deadLetterQueue ? { deadLetterQueue: props.deadLetterQueue } : {}),
      projectRoot: REPO_ROOT,
      depsLockFilePath: path.join(REPO_ROOT, 'package-lock.json'),
      awsSdkConnectionReuse: false,
      environment: {
        NODE_OPTIONS: '--enable-source-maps',
        POWERTOOLS_SERVICE_NAME: METRICS_SERVICE,
        POWERTOOLS_LOG_LEVEL: props.logLevel ?? 'INFO',
        POWERTOOLS_METRICS_NAMESPACE: METRICS_NAMESPACE,
        // Responses hold customer data: never copied into traces.
        POWERTOOLS_TRACER_CAPTURE_RESPONSE: 'false',
        ...props.environment,
      },
      bundling: {
        format: OutputFormat.ESM,
        banner: LAMBDA_BUNDLE.banner,
        minify: true,
        sourceMap: true,
        // Stack traces need the mappings only; leaving the sources out keeps the zip small.
        sourcesContent: false,
        // Resolve the ESM builds of dependencies first: better tree shaking, smaller bundles.
        mainFields: [...LAMBDA_BUNDLE.mainFields],
        // The aliases of LAMBDA_BUNDLE (credentials from the environment, stubs of unused SDK and
        // Powertools parts): see lib/bundling.ts.
        esbuildArgs: {
          ...Object.fromEntries(Object.entries(LAMBDA_BUNDLE.alias).map(([from, to]) => [`--alias:${from}`, to])),
          '--legal-comments': LAMBDA_BUNDLE.legalComments,
        },
        // The AWS SDK v3 is bundled on purpose instead of using the copy in the runtime:
        // a tree-shaken, minified SDK built from its ESM entry points loads faster on cold
        // start than the runtime's full CommonJS SDK, and the code runs against the exact
        // SDK version pinned in package-lock.json (tested locally), not whatever the runtime ships.
        bundleAwsSDK: true,
        externalModules: [],
        forceDockerBundling: false,
        logLevel: LogLevel.WARNING,
      },
    });
    if (tracing) {
      Validations.of(role).acknowledge({
        id: 'AwsSolutions-IAM5[Resource::*]',
        reason: 'X-Ray active tracing: xray:PutTraceSegments and xray:PutTelemetryRecords support no resource-level permissions, so CDK grants them on "*". Table, queue and key grants are resource-scoped (test/cdk/stack.test.ts checks every statement).',
      });
    }
    if (!props.deadLetterQueue) {
      Validations.of(this).acknowledge({
        id: 'Serverless-LambdaDLQ',
        reason: 'Invoked synchronously (API Gateway, authorizer) or by an event source mapping; a Lambda DLQ applies only to asynchronous invocations. Failures surface as API errors, the stream mapping\'s on-failure queue or the delivery queue\'s redrive DLQ.',
      });
    }
  }
}
