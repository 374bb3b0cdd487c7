/**
 * The deployment as the test suite runs it (test/integration/deployed-bundles.test.ts): every
 * function's bundle built as `cdk synth` builds it (lib/api-function.ts: the settings of
 * lib/bundling.ts, source maps without sources, the runtime's target), in one esbuild run with
 * many entry points; and what the synthesized template says about how each is invoked (routes,
 * the authorizer, event source mappings, schedules, bucket notifications, environment), from
 * which the events the deployed triggers send are built.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { App } from 'aws-cdk-lib';
import type { APIGatewayRequestAuthorizerEventV2, DynamoDBRecord, SQSEvent, SQSRecord } from 'aws-lambda';
import { build, type Metafile } from 'esbuild';
import { inject } from 'vitest';
import { FUNCTIONS, type FunctionSpec } from '../../functions/topology.js';
import { RUNTIME } from '../../lib/api-function.js';
import { buildCrmApp } from '../../lib/app.js';
import { LAMBDA_BUNDLE } from '../../lib/bundling.js';
import { FUNCTIONS_DIR } from '../../lib/paths.js';
import { stageConfig } from '../../lib/stage.js';
import type { ApiEvent } from '../../shared/http/operation.js';
import { synthesizeFlat } from './cdk-templates.js';

type Json = Record<string, unknown>;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Handler = (event: any, context?: any) => Promise<any>;

/**
 * Builds every function of the topology to `outDir` with the stack's esbuild settings in one run
 * (shared modules are parsed once). Returns each function's bundle file by function name, and
 * esbuild's metafile (every bundle's inputs).
 */
export async function buildDeployed(outDir: string, functions: readonly FunctionSpec[] = FUNCTIONS): Promise<{ files: Map<string, string>; metafile: Metafile }> {
  const entries = [...new Set(functions.map((f) => f.entry))];
  const { metafile } = await build({
    entryPoints: entries.map((e) => join(FUNCTIONS_DIR, e)),
    outbase: FUNCTIONS_DIR,
    outdir: outDir,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    logLevel: 'silent',
    metafile: true,
    ...LAMBDA_BUNDLE,
    // As NodejsFunction: the target follows the function's runtime; source maps without the sources.
    target: `node${/\d+/.exec(RUNTIME.name)![0]}`,
    sourcemap: true,
    sourcesContent: false,
    mainFields: [...LAMBDA_BUNDLE.mainFields],
    banner: { js: LAMBDA_BUNDLE.banner },
  });
  return { files: new Map(functions.map((f) => [f.name, join(outDir, f.entry.replace(/\.ts$/, '.mjs'))])), metafile };
}

/**
 * `buildDeployed` once per test run, for every file that needs the bundles (deployed-bundles, and
 * the CLI synth of test/cdk/stack.test.ts): the first to ask builds them into the run's directory
 * (`bundlesDir`, test/helpers/global-setup.ts, removed when the run ends), the others wait for its
 * `done` (or `failed`) marker and read the same files. Directory creation is the lock.
 */
export async function sharedDeployedBuild(): Promise<{ files: Map<string, string>; metafile: Metafile; outDir: string }> {
  const dir = inject('bundlesDir');
  const outDir = join(dir, 'out');
  const files = new Map(FUNCTIONS.map((f) => [f.name, join(outDir, f.entry.replace(/\.ts$/, '.mjs'))]));
  let owner = true;
  try {
    mkdirSync(dir);
  } catch {
    owner = false;
  }
  if (owner) {
    try {
      const { metafile } = await buildDeployed(outDir);
      writeFileSync(join(dir, 'metafile.json'), JSON.stringify(metafile));
      writeFileSync(join(dir, 'done'), '');
      return { files, metafile, outDir };
    } catch (error) {
      writeFileSync(join(dir, 'failed'), String(error));
      throw error;
    }
  }
  const deadline = Date.now() + 600_000;
  while (!existsSync(join(dir, 'done'))) {
    if (existsSync(join(dir, 'failed'))) throw new Error(`the run's shared build failed: ${readFileSync(join(dir, 'failed'), 'utf8')}`);
    if (Date.now() > deadline) throw new Error(`the run's shared build (${dir}) did not finish`);
    await new Promise((r) => setTimeout(r, 200));
  }
  return { files, metafile: JSON.parse(readFileSync(join(dir, 'metafile.json'), 'utf8')) as Metafile, outDir };
}

/** The bundle files of `buildDeployed`, by function name. */
export async function buildDeployedBundles(outDir: string, functions: readonly FunctionSpec[] = FUNCTIONS): Promise<Map<string, string>> {
  return (await buildDeployed(outDir, functions)).files;
}

/** The source files a bundle was built from (metafile paths, relative to the working directory). */
export function bundleInputs(metafile: Metafile, file: string): string[] {
  const output = Object.entries(metafile.outputs).find(([path]) => resolve(path) === resolve(file))?.[1];
  if (!output) throw new Error(`no bundle ${file} in the metafile`);
  return Object.keys(output.inputs);
}

/** Loads a bundle's `handler` (a bundle that fails to load throws here). */
export async function loadBundle(file: string): Promise<Handler> {
  const mod = (await import(pathToFileURL(file).href)) as { handler?: Handler };
  if (typeof mod.handler !== 'function') throw new Error(`${file} exports no handler`);
  return mod.handler;
}

/** What the synthesized template says about one function. */
export interface DeployedFunction {
  name: string;
  logicalId: string;
  environment: Record<string, unknown>;
  /** `POST /api/<op>` or `$default`, when the HTTP API routes to it. */
  routeKeys: string[];
  /** The route's integration payload format. */
  payloadFormat?: string;
  /** Event source mappings to it: the source's logical id and type, batch size, response types. */
  mappings: { source: string; sourceType: string; batchSize?: number; responseTypes: string[]; streamArn: boolean }[];
  /** EventBridge rules targeting it (their schedule expressions). */
  schedules: string[];
}

export interface Deployment {
  functions: Map<string, DeployedFunction>;
  authorizer: { functionName: string; identitySource: string[]; simpleResponses: boolean; payloadFormat: string; type: string };
  /** Bucket notifications: the bucket's logical id, the prefix, the queue's logical id. */
  notifications: { bucket: string; prefix?: string; queue: string; event: string }[];
  resources: Record<string, Json>;
  parameters: Record<string, Json>;
}

const refOf = (v: unknown): string | undefined => {
  const o = v as { Ref?: string; 'Fn::GetAtt'?: [string, string] } | undefined;
  return o?.Ref ?? o?.['Fn::GetAtt']?.[0];
};
/** The logical id inside `integrations/<id>`, an ARN join, or a Ref/GetAtt. */
const idsIn = (v: unknown): string[] => {
  const out: string[] = [];
  const walk = (x: unknown) => {
    if (Array.isArray(x)) x.forEach(walk);
    else if (x && typeof x === 'object') {
      const id = refOf(x);
      if (id) out.push(id);
      else Object.values(x).forEach(walk);
    }
  };
  walk(v);
  return out;
};

/** Synthesizes the dev stage (bundling skipped: only the template is read) and reads how each function is invoked. */
export function synthesizedDeployment(): Deployment {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const { stack } = buildCrmApp(app, stageConfig('dev'));
  const { resources, parameters } = synthesizeFlat(app, stack);
  const of = (type: string) => Object.entries(resources).filter(([, r]) => r.Type === type) as [string, { Properties: Json }][];
  const functions = new Map<string, DeployedFunction>();
  const byId = new Map<string, DeployedFunction>();
  for (const [id, r] of of('AWS::Lambda::Function')) {
    const name = /^crm \w+: (.+)$/.exec(String(r.Properties.Description ?? ''))?.[1];
    if (!name) continue;
    const fn: DeployedFunction = { name, logicalId: id, environment: ((r.Properties.Environment as Json | undefined)?.Variables ?? {}) as Json, routeKeys: [], mappings: [], schedules: [] };
    functions.set(name, fn);
    byId.set(id, fn);
  }
  const integrations = new Map(of('AWS::ApiGatewayV2::Integration').map(([id, r]) => [id, r.Properties]));
  for (const [, r] of of('AWS::ApiGatewayV2::Route')) {
    const integration = idsIn(r.Properties.Target).map((id) => integrations.get(id)).find(Boolean);
    const fn = integration && byId.get(idsIn(integration.IntegrationUri)[0]!);
    if (!fn) throw new Error(`route ${String(r.Properties.RouteKey)} reaches no function`);
    fn.routeKeys.push(String(r.Properties.RouteKey));
    fn.payloadFormat = String(integration.PayloadFormatVersion);
  }
  for (const [, r] of of('AWS::Lambda::EventSourceMapping')) {
    const fn = byId.get(refOf(r.Properties.FunctionName)!)!;
    const arn = r.Properties.EventSourceArn as { 'Fn::GetAtt'?: [string, string] };
    const source = refOf(arn)!;
    fn.mappings.push({ source, sourceType: String(resources[source]?.Type), batchSize: r.Properties.BatchSize as number | undefined, responseTypes: (r.Properties.FunctionResponseTypes ?? []) as string[], streamArn: arn['Fn::GetAtt']?.[1] === 'StreamArn' });
  }
  for (const [, r] of of('AWS::Events::Rule')) {
    for (const target of (r.Properties.Targets ?? []) as Json[]) byId.get(refOf(target.Arn)!)?.schedules.push(String(r.Properties.ScheduleExpression));
  }
  const [[, auth]] = of('AWS::ApiGatewayV2::Authorizer') as [[string, { Properties: Json }]];
  const notifications = of('AWS::S3::Bucket').flatMap(([bucket, r]) =>
    (((r.Properties.NotificationConfiguration as Json | undefined)?.QueueConfigurations ?? []) as Json[]).map((q) => ({
      bucket,
      queue: refOf(q.Queue)!,
      event: String(q.Event),
      prefix: ((((q.Filter as Json | undefined)?.S3Key as Json | undefined)?.Rules ?? []) as { Name: string; Value: string }[]).find((x) => x.Name === 'prefix')?.Value,
    })),
  );
  return {
    functions,
    authorizer: {
      functionName: idsIn(auth.Properties.AuthorizerUri).map((id) => byId.get(id)).find(Boolean)!.name,
      identitySource: auth.Properties.IdentitySource as string[],
      simpleResponses: auth.Properties.EnableSimpleResponses === true,
      payloadFormat: String(auth.Properties.AuthorizerPayloadFormatVersion),
      type: String(auth.Properties.AuthorizerType),
    },
    notifications,
    resources,
    parameters: parameters as Record<string, Json>,
  };
}

/**
 * A function's environment as deployed, each reference resolved by `resolve` (a resource's
 * logical id and type, or a stack parameter): a reference it cannot resolve throws.
 */
export function resolveEnvironment(d: Deployment, fn: DeployedFunction, resolve: (ref: { id: string; type: string }) => string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(fn.environment)) {
    if (typeof value === 'string') out[name] = value;
    else {
      // A reference, or a resource's own name written out (a bucket named by a join): the resource it names.
      const named = Object.entries(d.resources).find(([, r]) => JSON.stringify((r.Properties as Json | undefined)?.BucketName ?? (r.Properties as Json | undefined)?.QueueName) === JSON.stringify(value))?.[0];
      const id = refOf(value) ?? named;
      const type = id && id in d.parameters ? 'parameter' : id ? String(d.resources[id]?.Type) : 'unknown';
      const resolved = id ? resolve({ id, type }) : undefined;
      if (resolved === undefined) throw new Error(`${fn.name}: no local value for ${name} = ${JSON.stringify(value)} (${type})`);
      out[name] = resolved;
    }
  }
  return out;
}

/** The headers as API Gateway's HTTP API passes them: names lower-cased. */
const lowerCased = (headers: Record<string, string>) => Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));

const requestContext = (routeKey: string, method: string, path: string) => ({
  accountId: '123456789012',
  apiId: 'deployedtest',
  domainName: 'deployedtest.execute-api.us-east-1.amazonaws.com',
  domainPrefix: 'deployedtest',
  http: { method, path, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'deployed-bundles-test' },
  requestId: randomUUID(),
  routeKey,
  stage: '$default',
  time: new Date().toUTCString(),
  timeEpoch: Date.now(),
});

/** The REQUEST authorizer's event (payload format 2.0) for a request: identity source values, headers, route. */
export function authorizerEvent(d: Deployment, routeKey: string, method: string, path: string, headers: Record<string, string>): APIGatewayRequestAuthorizerEventV2 {
  const h = lowerCased(headers);
  const identitySource = d.authorizer.identitySource.map((s) => h[s.replace(/^\$request\.header\./, '').toLowerCase()]).filter((v): v is string => v !== undefined);
  return {
    version: '2.0',
    type: 'REQUEST',
    routeArn: `arn:aws:execute-api:us-east-1:123456789012:deployedtest/$default/${method}${path}`,
    identitySource,
    routeKey,
    rawPath: path,
    rawQueryString: '',
    cookies: [],
    headers: h,
    queryStringParameters: {},
    requestContext: requestContext(routeKey, method, path),
    pathParameters: {},
    stageVariables: {},
  } as unknown as APIGatewayRequestAuthorizerEventV2;
}

/** The event an HTTP API route sends its Lambda integration (payload format 2.0). */
export function httpApiEvent(opts: { routeKey: string; method: string; path: string; headers: Record<string, string>; body?: string; base64?: boolean; authorizer?: Record<string, unknown> }): ApiEvent {
  const body = opts.body === undefined ? undefined : opts.base64 ? Buffer.from(opts.body).toString('base64') : opts.body;
  return {
    version: '2.0',
    routeKey: opts.routeKey,
    rawPath: opts.path,
    rawQueryString: '',
    headers: { ...lowerCased(opts.headers), 'content-length': String(Buffer.byteLength(opts.body ?? '')), host: 'deployedtest.execute-api.us-east-1.amazonaws.com', 'x-forwarded-proto': 'https' },
    requestContext: { ...requestContext(opts.routeKey, opts.method, opts.path), ...(opts.authorizer ? { authorizer: { lambda: opts.authorizer } } : {}) },
    ...(body === undefined ? {} : { body }),
    isBase64Encoded: Boolean(opts.base64),
  } as unknown as ApiEvent;
}

/** An SQS batch as Lambda's event source mapping delivers it. */
export function sqsEvent(queueArn: string, bodies: string[]): SQSEvent {
  return {
    Records: bodies.map(
      (body): SQSRecord => ({
        messageId: randomUUID(),
        receiptHandle: randomUUID(),
        body,
        attributes: { ApproximateReceiveCount: '1', SentTimestamp: String(Date.now()), SenderId: 'AIDAEXAMPLE', ApproximateFirstReceiveTimestamp: String(Date.now()) },
        messageAttributes: {},
        md5OfBody: '',
        eventSource: 'aws:sqs',
        eventSourceARN: queueArn,
        awsRegion: 'us-east-1',
      }),
    ),
  };
}

/** S3's ObjectCreated notification of one object, as the bucket sends it to its queue (the SQS message body). */
export function s3NotificationBody(bucket: string, key: string, size: number): string {
  return JSON.stringify({
    Records: [
      {
        eventVersion: '2.1',
        eventSource: 'aws:s3',
        awsRegion: 'us-east-1',
        eventTime: new Date().toISOString(),
        eventName: 'ObjectCreated:Put',
        userIdentity: { principalId: 'AWS:AIDAEXAMPLE' },
        requestParameters: { sourceIPAddress: '127.0.0.1' },
        responseElements: { 'x-amz-request-id': 'EXAMPLE', 'x-amz-id-2': 'EXAMPLE' },
        s3: {
          s3SchemaVersion: '1.0',
          configurationId: 'deployed',
          bucket: { name: bucket, ownerIdentity: { principalId: 'EXAMPLE' }, arn: `arn:aws:s3:::${bucket}` },
          // S3 URL-encodes the key (spaces as '+').
          object: { key: encodeURIComponent(key).replace(/%20/g, '+').replace(/%2F/g, '/'), size, eTag: 'e', sequencer: '0' },
        },
      },
    ],
  });
}

/** EventBridge's scheduled event for a rule. */
export function scheduledEvent(ruleName: string) {
  return {
    version: '0',
    id: randomUUID(),
    'detail-type': 'Scheduled Event',
    source: 'aws.events',
    account: '123456789012',
    time: new Date().toISOString(),
    region: 'us-east-1',
    resources: [`arn:aws:events:us-east-1:123456789012:rule/${ruleName}`],
    detail: {},
  };
}

/** A Lambda context (the remaining time of the function's deployed time limit). */
export function lambdaContextOf(spec: FunctionSpec) {
  const deadline = Date.now() + spec.timeoutSeconds * 1000;
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName: `crm-dev-${spec.name}`,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:us-east-1:123456789012:function:crm-dev-${spec.name}`,
    memoryLimitInMB: String(spec.memoryMb ?? 512),
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/crm-dev-${spec.name}`,
    logStreamName: 'deployed-bundles-test',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

export type { DynamoDBRecord };
