import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { App, Stack, Validations } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import type { CfnFunction } from 'aws-cdk-lib/aws-lambda';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { AwsSolutionsChecks, ServerlessChecks } from 'cdk-nag';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { operations } from '../../functions/operations.js';
import { FUNCTIONS, functionByName, topologyOf, WORKERS } from '../../functions/topology.js';
import { synthesizeFlat } from '../helpers/cdk-templates.js';
import { sharedDeployedBuild } from '../helpers/deployed.js';
import { createTableInput, indexName, keys, TABLE_DEFINITION } from '../../shared/db/table.js';
import { createControlTableInput } from '../../shared/db/control.js';
import type { PolicyStatement } from '../../shared/schemas/policies.js';
import { refused, requestsOf } from '../../local/iam.js';
import { buildCrmApp } from '../../lib/app.js';
import { STALL_EXPRESSION } from '../../lib/crm-stack.js';
import { API_ERROR_LOG_KEY, METRIC, METRICS_NAMESPACE } from '../../shared/observability/names.js';
import { TABLE_WRITE_ACTIONS } from '../../lib/grants.js';
import { REPO_ROOT } from '../../lib/paths.js';
import { stageConfig } from '../../lib/stage.js';

type Json = Record<string, unknown>;
interface Resource {
  Type: string;
  Properties?: Json;
  DeletionPolicy?: string;
  UpdateReplacePolicy?: string;
  Metadata?: Json;
}

/**
 * Bundling is skipped here (`aws:cdk:bundling-stacks: []`): these tests assert the template, and
 * NodejsFunction still checks that every handler file exists. The CLI test at the end bundles
 * every function through NodejsFunction's command (the run's shared build: `sharedBundlesNpx`).
 */
function synth(stage: 'dev' | 'prod', topology = FUNCTIONS, opts: { nag?: boolean } = {}) {
  const outdir = mkdtempSync(path.join(tmpdir(), 'crm-synth-'));
  try {
    const app = new App({ outdir, context: { 'aws:cdk:bundling-stacks': [] } });
    const { stack } = buildCrmApp(app, stageConfig(stage), undefined, { topology });
    // cdk-nag's packs as validation plugins on the same synthesis (a finding fails it, listing
    // every finding); the probe app at the end of this file proves the packs report what is not acknowledged.
    if (opts.nag) Validations.of(app).addPlugins(new AwsSolutionsChecks(app), new ServerlessChecks(app));
    const flat = synthesizeFlat(app, stack);
    const template = Template.fromJSON({ Resources: flat.resources, Outputs: flat.outputs, Parameters: flat.parameters });
    const nagReport = opts.nag ? (JSON.parse(readFileSync(path.join(outdir, 'validation-report.json'), 'utf8')) as NagReport) : undefined;
    return { stack, template, resources: flat.resources as unknown as Record<string, Resource>, counts: flat.counts, outputs: flat.outputs, nagReport };
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

interface NagReport {
  pluginReports: { pluginName: string; violations: { ruleName: string; severity: string }[] }[];
}

const internalNames = WORKERS.map((w) => w.name);
const hasDelivery = internalNames.includes('delivery');
const allFunctionNames = FUNCTIONS.map((f) => f.name);
const bindingOf = (name: string) => functionByName(name)?.bindings ?? {};
const logicalId = (construct: { node: { defaultChild?: unknown } }) => Stack.of(construct as never).getLogicalId(construct.node.defaultChild as never);

let dev: ReturnType<typeof synth>;
let prod: ReturnType<typeof synth>;

/**
 * A directory holding an `npx` for the bundling's `npx --no-install esbuild --bundle <entry> …
 * --outfile=<dir>/index.mjs` (NodejsFunction's command when esbuild is a package of the project)
 * that hands every other call to the real npx. The bundles come from the run's one build of every
 * function with the stack's settings (`sharedDeployedBuild`, test/helpers/deployed.ts, which
 * deployed-bundles.test.ts loads and invokes), instead of ~90 esbuild runs that each parse the
 * AWS SDK again. The first function is bundled by the command itself, with the project's esbuild
 * run directly (npm's launcher loads the whole node_modules tree on each call), and its code is
 * compared with the shared build's (`compared`: "same <file>" or "different <file>"): the shared
 * bundles are what the command builds, but for the name in their source-map comment.
 */
function sharedBundlesNpx(bundlesDir: string): { dir: string; compared: string } {
  const dir = mkdtempSync(path.join(tmpdir(), 'cdk-npx-'));
  const realNpx = execFileSync('sh', ['-c', 'command -v npx'], { encoding: 'utf8' }).trim();
  const esbuild = path.join(REPO_ROOT, 'node_modules', '.bin', 'esbuild');
  const functionsDir = path.join(REPO_ROOT, 'functions');
  const compared = path.join(dir, 'compared');
  writeFileSync(
    path.join(dir, 'npx'),
    `#!/bin/sh
if [ "$1" != "--no-install" ] || [ "$2" != "esbuild" ]; then exec "${realNpx}" "$@"; fi
shift 2
entry=""; outfile=""; prev=""
for a in "$@"; do
  if [ "$prev" = "--bundle" ]; then entry="$a"; fi
  case "$a" in --outfile=*) outfile="\${a#--outfile=}";; esac
  prev="$a"
done
if [ -z "$entry" ] || [ -z "$outfile" ]; then exec "${esbuild}" "$@"; fi
rel="\${entry#${functionsDir}/}"; rel="\${rel%.ts}.mjs"
waited=0
while [ ! -e "${bundlesDir}/done" ]; do
  if [ -e "${bundlesDir}/failed" ] || [ $waited -gt 3000 ]; then echo "no shared build in ${bundlesDir}" >&2; exit 1; fi
  sleep 0.2; waited=$((waited + 1))
done
if mkdir "${dir}/first" 2>/dev/null; then
  "${esbuild}" "$@" || exit $?
  sed '$d' "$outfile" > "${dir}/first/own"; sed '$d' "${bundlesDir}/out/$rel" > "${dir}/first/shared"
  if cmp -s "${dir}/first/own" "${dir}/first/shared"; then echo "same $rel" > "${compared}"; else echo "different $rel" > "${compared}"; fi
  exit 0
fi
sed 's|^//# sourceMappingURL=.*$|//# sourceMappingURL=index.mjs.map|' "${bundlesDir}/out/$rel" > "$outfile" && cp "${bundlesDir}/out/$rel.map" "$outfile.map"
`,
    { mode: 0o755 },
  );
  return { dir, compared };
}

/**
 * `cdk synth` through the real CLI, offline and without AWS credentials, bundling every function
 * through NodejsFunction's command (with the run's shared build: `sharedBundlesNpx`): started
 * first, in a child process, so that it runs beside the template tests; its own test at the end
 * awaits it and checks what it wrote.
 */
function cliSynth(): { out: string; done: Promise<number>; build: ReturnType<typeof sharedDeployedBuild>; npxDir: string; compared: string } {
  const out = mkdtempSync(path.join(tmpdir(), 'cdk-synth-'));
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!/^(AWS_|CDK_)/.test(key) && !['DYNAMODB_ENDPOINT', 'TABLE_NAME', 'CURSOR_SECRET'].includes(key)) env[key] = value;
  }
  // This file builds the bundles if no other file of the run has (or waits for the one that does).
  const build = sharedDeployedBuild();
  build.catch(() => undefined);
  const npx = sharedBundlesNpx(inject('bundlesDir'));
  env.PATH = `${npx.dir}${path.delimiter}${env.PATH ?? ''}`;
  const started = Date.now();
  const done = promisify(execFile)(process.execPath, [path.join(REPO_ROOT, 'node_modules/aws-cdk/bin/cdk'), 'synth', '--quiet', '--no-notices', '--output', out], {
    cwd: REPO_ROOT,
    env,
    maxBuffer: 64 * 1024 * 1024,
  }).then(() => Date.now() - started);
  // Awaited by its test; a failure before then must not count as unhandled.
  done.catch(() => undefined);
  return { out, done, build, npxDir: npx.dir, compared: npx.compared };
}
let cli: ReturnType<typeof cliSynth>;

beforeAll(() => {
  cli = cliSynth();
  dev = synth('dev', FUNCTIONS, { nag: true });
  prod = synth('prod', FUNCTIONS, { nag: true });
}, 300_000);

afterAll(async () => {
  await cli?.done.catch(() => undefined);
  if (cli) for (const dir of [cli.out, cli.npxDir]) rmSync(dir, { recursive: true, force: true });
}, 600_000);

const ofType = (resources: Record<string, Resource>, type: string) => Object.entries(resources).filter(([, r]) => r.Type === type);
const refId = (value: unknown): string | undefined => {
  const v = value as { Ref?: string; 'Fn::GetAtt'?: [string, string] } | undefined;
  return v?.Ref ?? v?.['Fn::GetAtt']?.[0];
};
const asArray = <T>(value: T | T[] | undefined): T[] => (value === undefined ? [] : Array.isArray(value) ? value : [value]);

function functionId(name: string, from = dev): string {
  const fn = from.stack.functions.get(name);
  if (!fn) throw new Error(`no function ${name}`);
  return Stack.of(fn).getLogicalId(fn.node.defaultChild as CfnFunction);
}

function fnProps(name: string, from = dev): Json {
  return from.resources[functionId(name, from)]!.Properties!;
}

function envOf(name: string, from = dev): Record<string, unknown> {
  return ((fnProps(name, from).Environment as Json | undefined)?.Variables ?? {}) as Record<string, unknown>;
}

interface Statement {
  Effect: string;
  Action: string | string[];
  Resource: unknown;
  Condition?: Json;
}

/** Every IAM statement attached to a function's role. */
function statementsOf(name: string, from = dev): Statement[] {
  const roleId = refId(fnProps(name, from).Role);
  return ofType(from.resources, 'AWS::IAM::Policy')
    .filter(([, policy]) => asArray(policy.Properties!.Roles).some((role) => refId(role) === roleId))
    .flatMap(([, policy]) => (policy.Properties!.PolicyDocument as { Statement: Statement[] }).Statement);
}

const actionsOf = (statements: Statement[]) => statements.flatMap((s) => asArray(s.Action));
const tables = (from = dev) => ofType(from.resources, 'AWS::DynamoDB::Table');
/** The streamed table (records) and the control table (no stream). */
const tableOf = (from = dev) => tables(from).find(([, t]) => t.Properties!.StreamSpecification)!;
const controlTableOf = (from = dev) => tables(from).find(([, t]) => !t.Properties!.StreamSpecification)!;
const tableId = () => tableOf()[0];

/** A synthesized ARN as the local IAM check spells it (a table's `Fn::GetAtt` → `arn:…:table/<logical id>`). */
function render(value: unknown): string {
  if (typeof value === 'string') return value;
  const v = value as { 'Fn::GetAtt'?: [string, string]; 'Fn::Join'?: [string, unknown[]]; Ref?: string };
  if (v['Fn::GetAtt']) {
    const [id] = v['Fn::GetAtt'];
    return dev.resources[id]?.Type === 'AWS::DynamoDB::Table' ? `arn:aws:dynamodb:local:000000000000:table/${id}` : `arn:${id}`;
  }
  if (v['Fn::Join']) return v['Fn::Join'][1].map(render).join(v['Fn::Join'][0]);
  return v.Ref ? `ref:${v.Ref}` : JSON.stringify(value);
}

/** A function's synthesized statements as policy data, for the local evaluator (local/iam.ts). */
const policyData = (name: string): PolicyStatement[] =>
  statementsOf(name)
    .filter((s) => s.Effect === 'Allow')
    .map((s, i) => ({ sid: `S${i}`, actions: asArray(s.Action), resources: asArray(s.Resource).map(render), conditions: s.Condition as PolicyStatement['conditions'] }));

describe('API routes: one per registry entry', () => {
  it('has one POST /api/<name> route per operation plus $default, and nothing else', () => {
    dev.template.resourceCountIs('AWS::ApiGatewayV2::Route', operations.length + 1);
    const routeKeys = ofType(dev.resources, 'AWS::ApiGatewayV2::Route').map(([, r]) => r.Properties!.RouteKey);
    expect(routeKeys.sort()).toEqual([...operations.map((op) => `POST /api/${op.name}`), '$default'].sort());
  });

  it.each(operations.map((op) => [op.name]))('%s: authorized route integrated with its own function', (name) => {
    const [, route] = ofType(dev.resources, 'AWS::ApiGatewayV2::Route').find(([, r]) => r.Properties!.RouteKey === `POST /api/${name}`)!;
    expect(route.Properties!.AuthorizationType).toBe('CUSTOM');
    expect(refId(route.Properties!.AuthorizerId)).toBe(ofType(dev.resources, 'AWS::ApiGatewayV2::Authorizer')[0]![0]);
    const target = JSON.stringify(route.Properties!.Target);
    const [, integration] = ofType(dev.resources, 'AWS::ApiGatewayV2::Integration').find(([id]) => target.includes(`"${id}"`))!;
    expect(refId(integration.Properties!.IntegrationUri)).toBe(functionId(name));
    expect(integration.Properties!.PayloadFormatVersion).toBe('2.0');
  });

  it('has one function per registry entry (operations and internal functions)', () => {
    dev.template.resourceCountIs('AWS::Lambda::Function', allFunctionNames.length);
    expect([...dev.stack.functions.keys()].sort()).toEqual([...allFunctionNames].sort());
  });

  it('routes everything else to the fallback function without an authorizer', () => {
    const [, route] = ofType(dev.resources, 'AWS::ApiGatewayV2::Route').find(([, r]) => r.Properties!.RouteKey === '$default')!;
    expect(route.Properties!.AuthorizationType ?? 'NONE').toBe('NONE');
    expect(route.Properties!.AuthorizerId).toBeUndefined();
    const target = JSON.stringify(route.Properties!.Target);
    const [, integration] = ofType(dev.resources, 'AWS::ApiGatewayV2::Integration').find(([id]) => target.includes(`"${id}"`))!;
    expect(refId(integration.Properties!.IntegrationUri)).toBe(functionId('fallback'));
  });

  it('uses a cached simple-response Lambda authorizer on the Authorization header', () => {
    dev.template.resourceCountIs('AWS::ApiGatewayV2::Authorizer', 1);
    dev.template.hasResourceProperties('AWS::ApiGatewayV2::Authorizer', {
      AuthorizerType: 'REQUEST',
      EnableSimpleResponses: true,
      AuthorizerPayloadFormatVersion: '2.0',
      IdentitySource: ['$request.header.Authorization'],
      AuthorizerResultTtlInSeconds: 60,
      AuthorizerUri: Match.objectLike({ 'Fn::Join': Match.arrayWith([Match.arrayWith([Match.objectLike({ 'Fn::GetAtt': [functionId('authorizer'), 'Arn'] })])]) }),
    });
  });

  it('passes the RateLimit stack parameter (CRM_RATE_LIMIT, default 100,200) to every operation, and only to them', () => {
    const parameter = (dev.template.toJSON().Parameters as Record<string, Json>).RateLimit!;
    expect(parameter).toMatchObject({ Type: 'String', Default: '100,200' });
    const pattern = new RegExp(String(parameter.AllowedPattern));
    for (const ok of ['0', '100,200', '0.5,10']) expect(pattern.test(ok), ok).toBe(true);
    for (const bad of ['', '100', 'a,b', '100,200,1']) expect(pattern.test(bad), bad).toBe(false);
    for (const op of operations) expect(envOf(op.name).CRM_RATE_LIMIT, op.name).toEqual({ Ref: 'RateLimit' });
    for (const name of internalNames) expect(envOf(name), name).not.toHaveProperty('CRM_RATE_LIMIT');
  });

  it('throttles the default stage and writes access logs', () => {
    const { throttle } = stageConfig('dev');
    dev.template.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      StageName: '$default',
      AutoDeploy: true,
      DefaultRouteSettings: { ThrottlingRateLimit: throttle.rateLimit, ThrottlingBurstLimit: throttle.burstLimit },
      AccessLogSettings: Match.objectLike({ DestinationArn: Match.anyValue() }),
    });
  });
});

describe('functions: defaults and environment', () => {
  it.each(allFunctionNames.map((name) => [name]))('%s: nodejs22.x or newer, arm64, ESM bundle, source maps, own log group', (name) => {
    const props = fnProps(name);
    const major = Number(/^nodejs(\d+)\.x$/.exec(String(props.Runtime))?.[1]);
    expect(major).toBeGreaterThanOrEqual(22);
    expect(props.Architectures).toEqual(['arm64']);
    // 512 MB by default (ApiFunction); a worker may ask for more.
    expect(props.MemorySize).toBeGreaterThanOrEqual(512);
    expect(props.Handler).toBe('index.handler');
    expect(refId((props.LoggingConfig as Json | undefined)?.LogGroup)).toBeTruthy();
    const env = envOf(name);
    expect(env.NODE_OPTIONS).toBe('--enable-source-maps');
    expect(env.POWERTOOLS_LOG_LEVEL).toBeTruthy();
    expect(env.POWERTOOLS_SERVICE_NAME).toBe('crm');
    expect(env.CRM_ALLOW_INSECURE_WEBHOOKS).toBe('false');
    expect(env).not.toHaveProperty('CURSOR_SECRET');
    // Members per account stay the contract's 1,000 (CRM_MEMBER_LIMIT only lowers it, for the suite).
    expect(env).not.toHaveProperty('CRM_MEMBER_LIMIT');
    // The fallback touches nothing; the stream only routes to the changes queue (it reads the stream, not the table).
    if (name !== 'fallback' && name !== 'stream') expect(refId(env.TABLE_NAME)).toBe(tableId());
  });

  it.each(allFunctionNames.map((name) => [name]))('%s: X-Ray tracing, metrics namespace, no response capture', (name) => {
    for (const from of [dev, prod]) expect(fnProps(name, from).TracingConfig).toEqual({ Mode: 'Active' });
    expect(envOf(name).POWERTOOLS_METRICS_NAMESPACE).toBe(METRICS_NAMESPACE);
    expect(envOf(name).POWERTOOLS_TRACER_CAPTURE_RESPONSE).toBe('false');
  });

  it.each(allFunctionNames.map((name) => [name]))('%s: no managed policy; logs only to its own log group', (name) => {
    const role = dev.resources[refId(fnProps(name).Role)!]!.Properties!;
    expect(role.ManagedPolicyArns ?? []).toEqual([]);
    const logGroupId = refId((fnProps(name).LoggingConfig as Json).LogGroup);
    const logStatements = [
      ...((role.Policies ?? []) as { PolicyDocument: { Statement: Statement[] } }[]).flatMap((p) => p.PolicyDocument.Statement),
      ...statementsOf(name),
    ].filter((st) => actionsOf([st]).some((a) => a.startsWith('logs:')));
    expect(logStatements).toHaveLength(1);
    expect(actionsOf(logStatements).sort()).toEqual(['logs:CreateLogStream', 'logs:PutLogEvents']);
    expect(logStatements[0]!.Resource).toEqual({ 'Fn::GetAtt': [logGroupId, 'Arn'] });
  });

  it('gives every log group a retention', () => {
    for (const [, group] of ofType(dev.resources, 'AWS::Logs::LogGroup')) expect(group.Properties!.RetentionInDays).toBeGreaterThan(0);
  });
});

describe('least privilege', () => {
  const readOnly = [...operations.filter((op) => op.access === 'read').map((op) => op.name), 'authorizer'];
  const writers = [...operations.filter((op) => op.access === 'write').map((op) => op.name), 'changes', ...(hasDelivery ? ['delivery'] : [])];
  const tableWrites: string[] = [...TABLE_WRITE_ACTIONS, 'dynamodb:TransactWriteItems', 'dynamodb:PartiQLInsert', 'dynamodb:PartiQLUpdate', 'dynamodb:PartiQLDelete'];

  it('never grants a wildcard action, and `*` resources only for actions that cannot name one', () => {
    const unscopable = new Set(['dynamodb:ListStreams', 'xray:PutTraceSegments', 'xray:PutTelemetryRecords']);
    for (const [name, from] of allFunctionNames.flatMap((n) => [[n, dev], [n, prod]] as const)) {
      for (const statement of statementsOf(name, from)) {
        for (const action of asArray(statement.Action)) expect(action, name).not.toMatch(/\*$/);
        if (asArray(statement.Resource).includes('*')) {
          for (const action of asArray(statement.Action)) expect(unscopable.has(action), `${name}: ${action} on *`).toBe(true);
        }
      }
    }
  });

  it.each(readOnly.map((name) => [name]))('%s (read): reads the table and its indexes; writes only its declared items, each pinned to its partitions', (name) => {
    const statements = statementsOf(name);
    expect(actionsOf(statements)).toEqual(expect.arrayContaining(['dynamodb:GetItem', 'dynamodb:Query']));
    const control = controlTableOf()[0];
    for (const statement of statements) {
      const writes = asArray(statement.Action).filter((a) => tableWrites.includes(a));
      if (writes.length === 0) continue;
      expect(name).not.toBe('authorizer');
      if (JSON.stringify(statement.Resource).includes(`"${control}"`)) {
        // The pipeline's control items: a rate-limit token and the key's use, nothing else.
        expect(writes).toEqual(['dynamodb:UpdateItem']);
        expect(statement.Condition).toHaveProperty(['ForAllValues:StringLike', 'dynamodb:LeadingKeys']);
        continue;
      }
      // On the table: seeding the installation's SYSTEM partition (cursor key), or the items a read creates on first use.
      expect(writes).toEqual(['dynamodb:PutItem']);
      const patterns = Object.values(statement.Condition ?? {}).map((c) => (c as Json)['dynamodb:LeadingKeys']);
      expect(patterns.length, name).toBe(1);
      if (name !== 'inbound-emails-address') expect(statement.Condition).toEqual({ 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': ['SYSTEM'] } });
    }
    const unconditioned = statements.filter((s) => !s.Condition);
    for (const action of ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:BatchWriteItem', 'dynamodb:TransactWriteItems']) {
      expect(actionsOf(unconditioned)).not.toContain(action);
    }
    const readStatement = statements.find((s) => asArray(s.Action).includes('dynamodb:Query'))!;
    const resources = JSON.stringify(readStatement.Resource);
    expect(resources).toContain(tableId());
    expect(resources).toContain(`/index/${TABLE_DEFINITION.gsi1.name}`);
    expect(resources).toContain(`/index/${TABLE_DEFINITION.gsi2.name}`);
  });

  it.each(writers.map((name) => [name]))('%s (write): reads and writes the table only', (name) => {
    const actions = actionsOf(statementsOf(name));
    expect(actions).toEqual(expect.arrayContaining(['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem']));
    expect(actions.filter((a) => a.startsWith('dynamodb:') && !a.includes('Stream'))).not.toContain('dynamodb:Scan');
  });

  it('gives the fallback function no table access at all', () => {
    expect(actionsOf(statementsOf('fallback')).filter((a) => !a.startsWith('xray:'))).toEqual([]);
    expect(envOf('fallback')).not.toHaveProperty('TABLE_NAME');
  });

  it('lets only the queue users send to the delivery queue', () => {
    const senders = ['changes', ...(hasDelivery ? ['delivery'] : []), ...(internalNames.includes('sweeper') ? ['sweeper'] : []), ...(internalNames.includes('erasureWorker') ? ['erasureWorker'] : []), ...operations.filter((op) => bindingOf(op.name).deliveryQueue === 'send').map((op) => op.name)];
    const deliveryQueueId = logicalId(dev.stack.deliveryQueue);
    for (const name of allFunctionNames) {
      // Other queues (imports) have their own senders: only grants on the delivery queue count here.
      const sends = statementsOf(name).some((st) => actionsOf([st]).includes('sqs:SendMessage') && JSON.stringify(st.Resource).includes(`"${deliveryQueueId}"`));
      expect(sends, name).toBe(senders.includes(name));
      expect(Boolean(envOf(name).DELIVERY_QUEUE_URL), name).toBe(senders.includes(name));
    }
  });

  // --- exports (contract §16) ---
  it('grants the exports/ prefix of the imports bucket only: the export worker writes (multipart, abort), exports-get/-list read, nobody lists or deletes', () => {
    const onExports = (name: string) => statementsOf(name).filter((st) => JSON.stringify(st.Resource).includes('/exports/*'));
    expect(actionsOf(onExports('exportWorker')).sort()).toEqual(['s3:AbortMultipartUpload', 's3:PutObject']);
    for (const name of ['exports-get', 'exports-list']) expect(actionsOf(onExports(name)), name).toEqual(['s3:GetObject']);
    expect(envOf('exportWorker').EXPORTS_BUCKET).toBeDefined();
    // The erasure worker (contract §18) deletes export files of contacts, and import files holding the person's email.
    expect(actionsOf(onExports('erasureWorker'))).toEqual(['s3:DeleteObject']);
    for (const name of allFunctionNames.filter((n) => !['exportWorker', 'exports-get', 'exports-list', 'erasureWorker'].includes(n))) expect(onExports(name), name).toEqual([]);
    for (const name of allFunctionNames.filter((n) => n !== 'erasureWorker')) expect(actionsOf(statementsOf(name)).filter((a) => a === 's3:ListBucket' || a === 's3:DeleteObject'), name).toEqual([]);
    expect(actionsOf(statementsOf('erasureWorker'))).not.toContain('s3:ListBucket');
    // It deletes the raw inbound messages of the emails it deletes; the inbound function only reads them.
    const onInbound = (name: string) => statementsOf(name).filter((st) => JSON.stringify(st.Resource).includes('/inbound/*'));
    expect(actionsOf(onInbound('erasureWorker'))).toEqual(['s3:DeleteObject']);
    expect(actionsOf(onInbound('inbound'))).toEqual(['s3:GetObject']);
    // Only exports-create sends to the export queue, and the worker, which puts back a job beyond its account's cap; the worker is triggered by it (batch size 1).
    const senders = allFunctionNames.filter((n) => Boolean(envOf(n).EXPORTS_QUEUE_URL));
    expect(senders.sort()).toEqual(['exportWorker', 'exports-create']);
    dev.template.hasResourceProperties('AWS::Lambda::EventSourceMapping', { BatchSize: 1, FunctionName: Match.anyValue(), FunctionResponseTypes: ['ReportBatchItemFailures'] });
  });
  // --- end exports ---

  it('lets only webhook writers encrypt, and only the delivery worker and replayed creates decrypt, with the secrets key', () => {
    const encrypters = operations.filter((op) => ['encrypt', 'encrypt-decrypt'].includes(bindingOf(op.name).secretsKey ?? '')).map((op) => op.name);
    const openers = operations.filter((op) => bindingOf(op.name).secretsKey === 'encrypt-decrypt').map((op) => op.name);
    expect(openers).toEqual(['webhooks-create']);
    for (const name of allFunctionNames) {
      const actions = actionsOf(statementsOf(name)).filter((a) => a.startsWith('kms:')).sort();
      if (encrypters.includes(name)) expect(actions).toEqual(openers.includes(name) ? ['kms:Decrypt', 'kms:Encrypt'] : ['kms:Encrypt']);
      else if (name === 'delivery') expect(actions).toEqual(['kms:Decrypt']);
      else expect(actions, name).toEqual([]);
      expect(Boolean(envOf(name).WEBHOOK_SECRET_KEY_ID), name).toBe(encrypters.includes(name) || name === 'delivery');
    }
    dev.template.hasResourceProperties('AWS::KMS::Key', { EnableKeyRotation: true });
  });
});

describe('every API function may do what its pipeline does on every call (shared/http/operation.ts admit)', () => {
  const account = '0b5c9d0e-0000-4000-8000-000000000001';
  const keyId = '0b5c9d0e-0000-4000-8000-000000000002';
  const update = (table: string, key: { pk: string; sk: string }) => requestsOf('DynamoDB', 'UpdateCommand', { TableName: table, Key: key });

  it.each(operations.map((op) => [op.name]))('%s: takes a token from the rate-limit bucket and records its key use, in the control table', (name) => {
    const policy = policyData(name);
    const control = controlTableOf()[0];
    expect(JSON.stringify(envOf(name).CONTROL_TABLE_NAME)).toContain(control);
    expect(refused(policy, update(control, keys.rateLimit(account)))).toBeUndefined();
    expect(refused(policy, update(control, keys.apiKey(account, keyId)))).toBeUndefined();
    // Pinned to those items: not a record of the table, not an idempotency record unless the operation declares it.
    const op = operations.find((o) => o.name === name)!;
    if (op.access === 'read') expect(refused(policy, update(tableId(), keys.rateLimit(account)))).toBeDefined();
    expect(refused(policy, requestsOf('DynamoDB', 'PutCommand', { TableName: control, Item: keys.idempotency(account, name, 'k') })) === undefined).toBe(Boolean(op.idempotent));
  });

  it('gives the workers only the control table items they use: the erasure worker stored answers and the log, the changes worker the log and search entries, the export worker reads of search entries', () => {
    const users = ['erasureWorker', 'changes', 'exportWorker'];
    const others = WORKERS.filter((w) => !users.includes(w.name));
    for (const worker of others) expect(envOf(worker.name)).not.toHaveProperty('CONTROL_TABLE_NAME');
    for (const worker of others) expect(JSON.stringify(statementsOf(worker.name))).not.toContain(`"${controlTableOf()[0]}"`);
    const control = controlTableOf()[0]!;
    const [erasure, changes, exporter] = users.map((name) => policyData(name));
    const word = keys.indexEntry(account, 'contact', indexName.word('ada'), '2026-01-01T00:00:00.000Z', 'c1');
    const logHead = keys.eventHead(account);
    const query = (pk: string) => requestsOf('DynamoDB', 'QueryCommand', { TableName: control, KeyConditionExpression: 'pk = :p', ExpressionAttributeValues: { ':p': pk } });
    const batchPut = (item: Record<string, unknown>) => requestsOf('DynamoDB', 'BatchWriteCommand', { RequestItems: { [control]: [{ PutRequest: { Item: item } }] } });
    expect(refused(erasure!, update(control, keys.idempotency(account, 'contacts-create', 'k')))).toBeUndefined();
    expect(refused(erasure!, update(control, keys.eventEntry(keys.eventRecordPartition(account, 'c1'), 3)))).toBeUndefined();
    expect(refused(erasure!, update(control, keys.rateLimit(account)))).toBeDefined();
    expect(refused(changes!, batchPut(word))).toBeUndefined();
    expect(refused(changes!, update(control, logHead))).toBeUndefined();
    expect(refused(changes!, update(control, keys.rateLimit(account)))).toBeDefined();
    expect(refused(changes!, update(control, keys.idempotency(account, 'contacts-create', 'k')))).toBeDefined();
    expect(refused(exporter!, query(word.pk))).toBeUndefined();
    expect(refused(exporter!, batchPut(word))).toBeDefined();
    expect(refused(exporter!, query(keys.eventPartition(account)))).toBeDefined();
  });
});

describe('table', () => {
  const input = createTableInput('x');

  it('matches the shared table definition', () => {
    dev.template.resourceCountIs('AWS::DynamoDB::Table', 2);
    const props = tableOf()[1].Properties!;
    expect(props.KeySchema).toEqual(input.KeySchema);
    expect(props.AttributeDefinitions).toEqual(expect.arrayContaining(input.AttributeDefinitions));
    expect((props.AttributeDefinitions as unknown[]).length).toBe(input.AttributeDefinitions.length);
    expect(props.GlobalSecondaryIndexes).toEqual(input.GlobalSecondaryIndexes);
    expect(props.GlobalSecondaryIndexes).toEqual([
      expect.objectContaining({ IndexName: TABLE_DEFINITION.gsi1.name, Projection: { ProjectionType: 'ALL' } }),
      expect.objectContaining({ IndexName: TABLE_DEFINITION.gsi2.name, Projection: { ProjectionType: 'ALL' } }),
    ]);
    expect(props.StreamSpecification).toEqual({ StreamViewType: TABLE_DEFINITION.stream });
    expect(props.BillingMode).toBe('PAY_PER_REQUEST');
    expect(props.PointInTimeRecoverySpecification).toEqual({ PointInTimeRecoveryEnabled: true });
  });

  it('has a control table as shared/db/control.ts declares it: no stream, no index, expiring items', () => {
    const control = createControlTableInput('x');
    const props = controlTableOf()[1].Properties!;
    expect(props.KeySchema).toEqual(control.KeySchema);
    expect(props.AttributeDefinitions).toEqual(control.AttributeDefinitions);
    expect(props.StreamSpecification).toBeUndefined();
    expect(props.GlobalSecondaryIndexes).toBeUndefined();
    expect(props.TimeToLiveSpecification).toEqual({ AttributeName: TABLE_DEFINITION.ttlAttribute, Enabled: true });
  });

  it('is retained with deletion protection in prod, and removable in dev (both tables)', () => {
    for (const [, prodTable] of tables(prod)) {
      expect(prodTable.DeletionPolicy).toBe('Retain');
      expect(prodTable.UpdateReplacePolicy).toBe('Retain');
      expect(prodTable.Properties!.DeletionProtectionEnabled).toBe(true);
    }
    expect(ofType(prod.resources, 'AWS::KMS::Key')[0]![1].DeletionPolicy).toBe('Retain');
    for (const [, devTable] of tables(dev)) {
      expect(devTable.DeletionPolicy).toBe('Delete');
      expect(devTable.Properties!.DeletionProtectionEnabled ?? false).toBe(false);
    }
  });
});

describe('stream and queues', () => {
  const queueId = logicalId;

  it('has a delivery queue with a dead-letter queue, SSE and a long enough visibility timeout', () => {
    const queue = dev.resources[queueId(dev.stack.deliveryQueue)]!.Properties!;
    expect(queue.RedrivePolicy).toEqual({ deadLetterTargetArn: { 'Fn::GetAtt': [queueId(dev.stack.deliveryDlq), 'Arn'] }, maxReceiveCount: 5 });
    expect(queue.VisibilityTimeout).toBeGreaterThanOrEqual(6 * functionByName('delivery')!.timeoutSeconds);
    for (const [, q] of ofType(dev.resources, 'AWS::SQS::Queue')) expect(q.Properties!.SqsManagedSseEnabled).toBe(true);
  });

  it('consumes the table stream with bisect, retry limit, partial failures and an on-failure queue', () => {
    dev.template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: functionId('stream') },
      EventSourceArn: { 'Fn::GetAtt': [tableId(), 'StreamArn'] },
      StartingPosition: 'TRIM_HORIZON',
      BatchSize: 100,
      BisectBatchOnFunctionError: true,
      MaximumRetryAttempts: 10,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [queueId(dev.stack.streamFailures), 'Arn'] } } },
    });
  });

  it('routes the stream to a FIFO changes queue with a FIFO dead-letter queue, consumed with partial batch responses', () => {
    const queue = dev.resources[queueId(dev.stack.changesQueue)]!.Properties!;
    expect(queue).toMatchObject({ FifoQueue: true, DeduplicationScope: 'messageGroup', FifoThroughputLimit: 'perMessageGroupId' });
    expect(queue.RedrivePolicy).toEqual({ deadLetterTargetArn: { 'Fn::GetAtt': [queueId(dev.stack.changesDlq), 'Arn'] }, maxReceiveCount: 10 });
    expect(dev.resources[queueId(dev.stack.changesDlq)]!.Properties!.FifoQueue).toBe(true);
    expect(queue.VisibilityTimeout).toBeGreaterThanOrEqual(6 * functionByName('changes')!.timeoutSeconds);
    dev.template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: functionId('changes') },
      EventSourceArn: { 'Fn::GetAtt': [queueId(dev.stack.changesQueue), 'Arn'] },
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      ScalingConfig: { MaximumConcurrency: 10 },
    });
    // Only the stream sends to it.
    const changesQueueId = logicalId(dev.stack.changesQueue);
    for (const name of allFunctionNames) {
      const sends = statementsOf(name).some((st) => actionsOf([st]).includes('sqs:SendMessage') && JSON.stringify(st.Resource).includes(`"${changesQueueId}"`));
      expect(sends, name).toBe(name === 'stream');
    }
  });

  it.runIf(hasDelivery)('delivers from the queue with partial batch responses', () => {
    dev.template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: functionId('delivery') },
      EventSourceArn: { 'Fn::GetAtt': [queueId(dev.stack.deliveryQueue), 'Arn'] },
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
    expect(fnProps('delivery').Timeout).toBe(functionByName('delivery')!.timeoutSeconds);
  });
});

describe('alarms and outputs', () => {
  const alarms = () => ofType(dev.resources, 'AWS::CloudWatch::Alarm').map(([, a]) => a.Properties!);

  it('alarms on the API 5xx rate with metric math', () => {
    const rate = alarms().find((a) => JSON.stringify(a.Metrics ?? '').includes('errors / requests'));
    expect(rate).toBeDefined();
    expect(JSON.stringify(rate!.Metrics)).toContain('"MetricName":"5xx"');
    expect(JSON.stringify(rate!.Metrics)).toContain('"MetricName":"Count"');
  });

  it('alarms on errors of every function', () => {
    for (const name of allFunctionNames) {
      const id = functionId(name);
      expect(
        alarms().some((a) => a.MetricName === 'Errors' && JSON.stringify(a.Dimensions).includes(`"${id}"`)),
        name,
      ).toBe(true);
    }
  });

  it('alarms on both dead-letter queues and on the stream iterator age', () => {
    const dlqAlarms = alarms().filter((a) => a.MetricName === 'ApproximateNumberOfMessagesVisible').map((a) => JSON.stringify(a.Dimensions));
    for (const queue of [dev.stack.deliveryDlq, dev.stack.streamFailures, dev.stack.changesDlq]) {
      expect(dlqAlarms.some((d) => d.includes(`"${logicalId(queue)}"`))).toBe(true);
    }
    // Each queue's backlog: its oldest message's age.
    const ages = alarms().filter((a) => a.MetricName === 'ApproximateAgeOfOldestMessage').map((a) => JSON.stringify(a.Dimensions));
    for (const queue of [dev.stack.deliveryQueue, dev.stack.changesQueue]) expect(ages.some((d) => d.includes(`"${logicalId(queue)}"`))).toBe(true);
    const age = alarms().find((a) => a.MetricName === 'IteratorAge');
    expect(JSON.stringify(age?.Dimensions)).toContain(functionId('stream'));
  });

  /** The stall alarm (metric math: in flight, none deleted) of the queue with this logical id. */
  const stallAlarmsOf = (queueId: string) =>
    alarms().filter((a) => (a.Metrics as Json[] | undefined)?.some((m) => m.Expression === STALL_EXPRESSION) && JSON.stringify(a.Metrics).includes(`"${queueId}"`));

  it('alarms when the changes queue\'s consumer takes messages but finishes none: in flight and none deleted, each minute for 5 minutes', () => {
    expect(STALL_EXPRESSION).toBe('IF(FILL(inflight, 0) > 0 AND FILL(deleted, 0) == 0, 1, 0)');
    const changesId = logicalId(dev.stack.changesQueue);
    const [stalled, ...more] = stallAlarmsOf(changesId);
    expect(more).toEqual([]);
    expect(stalled).toMatchObject({
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      EvaluationPeriods: 5,
      DatapointsToAlarm: 5,
      TreatMissingData: 'notBreaching',
      AlarmActions: [{ Ref: expect.stringMatching(/^AlarmTopic/) }],
    });
    expect(stalled!.AlarmDescription).toMatch(/^The changes queue is stalled: its consumer \(the changes function\) takes messages but finishes none\./);
    const metrics = stalled!.Metrics as Array<{ Id: string; Expression?: string; ReturnData?: boolean; MetricStat?: Json }>;
    expect(metrics.filter((m) => m.ReturnData !== false).map((m) => m.Expression)).toEqual([STALL_EXPRESSION]);
    const stat = (id: string) => metrics.find((m) => m.Id === id)?.MetricStat;
    const ofQueue = (metricName: string) => ({ Namespace: 'AWS/SQS', MetricName: metricName, Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [changesId, 'QueueName'] } }] });
    expect(stat('inflight')).toEqual({ Metric: ofQueue('ApproximateNumberOfMessagesNotVisible'), Period: 60, Stat: 'Maximum' });
    expect(stat('deleted')).toEqual({ Metric: ofQueue('NumberOfMessagesDeleted'), Period: 60, Stat: 'Sum' });
  });

  it('gives every queue a worker consumes a stall alarm, longer than a batch of that worker may hold its messages', () => {
    const mappings = ofType(dev.resources, 'AWS::Lambda::EventSourceMapping').map(([, m]) => m.Properties!);
    const consumers = FUNCTIONS.filter((f) => f.trigger.kind === 'queue');
    expect(consumers.map((f) => f.name)).toEqual(expect.arrayContaining(['changes', 'delivery', 'importWorker', 'exportWorker', 'erasureWorker', 'indexBuildWorker']));
    for (const consumer of consumers) {
      const mapping = mappings.find((m) => refId(m.FunctionName) === functionId(consumer.name))!;
      const queueId = refId(mapping.EventSourceArn)!;
      const [stalled, ...more] = stallAlarmsOf(queueId);
      expect(stalled, consumer.name).toBeDefined();
      expect(more, consumer.name).toEqual([]);
      const minutes = Number(stalled!.EvaluationPeriods);
      expect(stalled!.DatapointsToAlarm, consumer.name).toBe(minutes);
      expect(minutes, consumer.name).toBeGreaterThanOrEqual(5);
      // Past the worker's time limit and a minute (a job queue's message stays invisible that long while another worker holds its job).
      expect(minutes * 60, consumer.name).toBeGreaterThan(consumer.timeoutSeconds + 60);
      expect(stalled!.AlarmDescription, consumer.name).toContain(`(the ${consumer.name} function) takes messages but finishes none`);
    }
    expect(alarms().filter((a) => (a.Metrics as Json[] | undefined)?.some((m) => m.Expression === STALL_EXPRESSION))).toHaveLength(consumers.length);
  });

  it('sends every alarm to the alarm topic', () => {
    for (const alarm of alarms()) expect(alarm.AlarmActions).toEqual([{ Ref: expect.stringMatching(/^AlarmTopic/) }]);
  });

  it('outputs the API URL, the table name and the queue URL', () => {
    const outputs = Object.keys(dev.outputs);
    expect(outputs).toEqual(expect.arrayContaining(['ApiUrl', 'TableName', 'ControlTableName', 'DeliveryQueueUrl']));
  });
});

describe('dashboard', () => {
  const body = () => {
    const [, dashboard] = ofType(dev.resources, 'AWS::CloudWatch::Dashboard')[0]!;
    return JSON.stringify(dashboard.Properties!.DashboardBody);
  };

  it('has one dashboard per stage, named after it', () => {
    dev.template.resourceCountIs('AWS::CloudWatch::Dashboard', 1);
    dev.template.hasResourceProperties('AWS::CloudWatch::Dashboard', { DashboardName: 'crm-dev' });
    prod.template.hasResourceProperties('AWS::CloudWatch::Dashboard', { DashboardName: 'crm-prod' });
  });

  it('shows the service metrics (API errors by code, deliveries, imports, inbound mail)', () => {
    const text = body();
    for (const name of Object.values(METRIC)) expect(text, name).toContain(name);
    expect(text).toMatch(new RegExp(`SEARCH\\('\\{${METRICS_NAMESPACE},code,service\\} MetricName=[\\\\"]+${METRIC.apiErrors}`));
  });

  it('graphs both tables\' capacity and throttles (the control table takes the search entries and the change log)', () => {
    const text = body();
    for (const id of [tableId(), controlTableOf()[0]!]) expect(text, id).toContain(`"${id}"`);
    expect(text).toContain('Control table throttles');
  });

  it('counts API errors by code from the log line of every error answer (a metric filter per API function)', () => {
    const filters = ofType(dev.resources, 'AWS::Logs::MetricFilter').map(([, r]) => r.Properties!);
    const apiFunctions = FUNCTIONS.filter((f) => f.trigger.kind === 'http' || f.trigger.kind === 'http-default');
    expect(filters).toHaveLength(apiFunctions.length);
    expect(new Set(filters.map((f) => JSON.stringify(f.LogGroupName))).size).toBe(apiFunctions.length);
    for (const f of filters) {
      expect(f).toMatchObject({
        FilterPattern: `{ $.${API_ERROR_LOG_KEY} = "*" }`,
        MetricTransformations: [{ MetricNamespace: METRICS_NAMESPACE, MetricName: METRIC.apiErrors, MetricValue: '1', Unit: 'Count' }],
      });
      const dims = (f.MetricTransformations as { Dimensions: { Key: string; Value: string }[] }[])[0]!.Dimensions;
      expect(dims).toEqual(expect.arrayContaining([{ Key: 'code', Value: `$.${API_ERROR_LOG_KEY}` }, { Key: 'service', Value: '$.service' }]));
    }
  });

  /** The dashboard's widgets, each template reference written `<logical id>`. */
  const widgets = () => {
    const [, dashboard] = ofType(dev.resources, 'AWS::CloudWatch::Dashboard')[0]!;
    const parts = ((dashboard.Properties!.DashboardBody as { 'Fn::Join': [string, unknown[]] })['Fn::Join'])[1];
    const text = parts.map((p) => (typeof p === 'string' ? p : `<${refId(p) ?? JSON.stringify(p)}>`)).join('');
    return (JSON.parse(text) as { widgets: Array<{ y: number; properties: { title?: string; metrics?: unknown[][] } }> }).widgets;
  };

  it('graphs each queue\'s messages in flight and messages handled per minute, next to the backlog graphs (a stuck consumer)', () => {
    const text = body();
    for (const name of ['ApproximateNumberOfMessagesNotVisible', 'NumberOfMessagesDeleted']) expect(text).toContain(name);
    const all = widgets();
    /** The graph of one metric of every queue. */
    const graphOf = (metricName: string) => all.find((w) => w.properties.metrics?.length && w.properties.metrics.every((m) => m[1] === metricName))!;
    const changes = `<${logicalId(dev.stack.changesQueue)}>`;
    const inFlight = graphOf('ApproximateNumberOfMessagesNotVisible');
    const handled = graphOf('NumberOfMessagesDeleted');
    expect(inFlight.properties.metrics).toContainEqual(['AWS/SQS', 'ApproximateNumberOfMessagesNotVisible', 'QueueName', changes, { label: 'changes', period: 60, stat: 'Maximum' }]);
    expect(handled.properties.metrics).toContainEqual(['AWS/SQS', 'NumberOfMessagesDeleted', 'QueueName', changes, { label: 'changes', period: 60, stat: 'Sum' }]);
    // One line per queue of the topology, as the backlog graphs.
    const oldest = graphOf('ApproximateAgeOfOldestMessage');
    for (const graph of [inFlight, handled]) expect(graph.properties.metrics).toHaveLength(oldest.properties.metrics!.length);
    expect(inFlight.properties.metrics!.length).toBeGreaterThanOrEqual(6);
    // The row right under the backlog's.
    expect(inFlight.y).toBe(handled.y);
    expect(inFlight.y).toBeGreaterThan(oldest.y);
    expect(all.filter((w) => w.y > oldest.y && w.y < inFlight.y)).toEqual([]);
  });

  it('shows the state of every alarm of the stack', () => {
    const text = body();
    const alarms = ofType(dev.resources, 'AWS::CloudWatch::Alarm').map(([id]) => id);
    expect(alarms.length).toBeGreaterThan(5);
    for (const id of alarms) expect(text, id).toContain(`"${id}","Arn"`);
  });
});

describe('cdk-nag (AwsSolutions + Serverless) over the whole app', () => {
  it.each(['dev', 'prod'] as const)('%s: no unacknowledged error or warning', (stage) => {
    const report = (stage === 'dev' ? dev : prod).nagReport!;
    // The report lists a plugin only with findings (or acknowledgements); the written report shows the packs ran.
    const findings = report.pluginReports.flatMap((p) => p.violations.map((v) => ({ plugin: p.pluginName, rule: v.ruleName, severity: v.severity })));
    expect(findings.filter((f) => f.severity === 'error')).toEqual([]);
    expect(findings.filter((f) => f.severity === 'warning')).toEqual([]);
  });
});

describe('stages', () => {
  it('puts the stage in the stack name so dev and prod can sit side by side', () => {
    expect(dev.stack.stackName).toContain('dev');
    expect(prod.stack.stackName).toContain('prod');
  });

  it('defaults to dev and rejects unknown stages', () => {
    expect(stageConfig(undefined).name).toBe('dev');
    expect(() => stageConfig('staging')).toThrow(/unknown stage/);
  });
});

describe('cdk synth through the real CLI', () => {
  it(
    'succeeds offline with no AWS credentials and bundles every function through NodejsFunction\'s command with the local esbuild',
    async () => {
      const { out, done, build, compared } = cli;
      const ms = await done;
      await build;
      // The function the command bundled itself has the code of the shared build's bundle (which the other functions' assets copy).
      expect(readFileSync(compared, 'utf8').trim()).toMatch(/^same \S+\.mjs$/);
      // The parent template and its nested stacks' templates.
      const templates = readdirSync(out).filter((f) => f.endsWith('.template.json'));
      const functions = templates.flatMap((f) => ofType((JSON.parse(readFileSync(path.join(out, f), 'utf8')) as { Resources: Record<string, Resource> }).Resources, 'AWS::Lambda::Function'));
      expect(functions.length).toBe(allFunctionNames.length);
      const sizes = functions.map(([id, fn]) => {
        const asset = path.join(out, String(fn.Metadata!['aws:asset:path']));
        expect(existsSync(path.join(asset, 'index.mjs')), id).toBe(true);
        expect(existsSync(path.join(asset, 'index.mjs.map')), id).toBe(true);
        return statSync(path.join(asset, 'index.mjs')).size;
      });
      // Bundled, minified handlers stay far below Lambda's limits; a jump here means a bad import.
      expect(Math.max(...sizes)).toBeLessThan(2 * 1024 * 1024);
      expect(readdirSync(out).some((f) => f.endsWith('.assets.json'))).toBe(true);
      console.info(`cdk synth: ${ms} ms (beside the template tests, the bundles of the run's shared build), bundles ${Math.min(...sizes)}–${Math.max(...sizes)} bytes`);
    },
    600_000,
  );
});

describe('webhook delivery sweeper (a scheduled function of the topology)', () => {
  it('runs the sweeper function every minute from an EventBridge rule, with an async-invocation DLQ', () => {
    const fnId = functionId('sweeper');
    const rules = ofType(dev.resources, 'AWS::Events::Rule').filter(([, r]) => asArray((r.Properties!.Targets as Json[] | undefined) ?? []).some((t) => refId((t as Json).Arn) === fnId));
    expect(rules).toHaveLength(1);
    expect(rules[0]![1].Properties).toMatchObject({ ScheduleExpression: 'rate(1 minute)', State: 'ENABLED' });
    dev.template.hasResourceProperties('AWS::Lambda::Permission', { Action: 'lambda:InvokeFunction', Principal: 'events.amazonaws.com', FunctionName: { 'Fn::GetAtt': [fnId, 'Arn'] } });
    const dlq = refId((fnProps('sweeper').DeadLetterConfig as Json | undefined)?.TargetArn);
    expect(dev.resources[dlq!]?.Type).toBe('AWS::SQS::Queue');
  });

  it('queries the table and its index (never scans), updates deliveries and sends to the delivery queue', () => {
    const actions = actionsOf(statementsOf('sweeper'));
    expect(actions).toEqual(expect.arrayContaining(['dynamodb:Query', 'dynamodb:GetItem', 'dynamodb:UpdateItem', 'dynamodb:PutItem', 'sqs:SendMessage']));
    expect(actions).not.toContain('dynamodb:Scan');
    const query = statementsOf('sweeper').find((s) => asArray(s.Action).includes('dynamodb:Query'))!;
    expect(JSON.stringify(query.Resource)).toContain(`/index/${TABLE_DEFINITION.gsi1.name}`);
    expect(envOf('sweeper')).toMatchObject({ TABLE_NAME: expect.anything(), DELIVERY_QUEUE_URL: expect.anything() });
    expect(actionsOf(statementsOf('sweeper')).filter((a) => a.startsWith('kms:'))).toEqual([]);
  });
});

describe('room to grow (CloudFormation: 500 resources per template)', () => {
  it('keeps every template of today\'s app under 300 resources', () => {
    for (const from of [dev, prod]) {
      for (const [file, count] of Object.entries(from.counts)) expect(count, file).toBeLessThanOrEqual(300);
    }
    console.info(`templates: ${Object.keys(dev.counts).length}, largest ${Math.max(...Object.values(dev.counts))} resources`);
  });

  it('keeps every template under 500 with twice today\'s operations', () => {
    // Every operation twice (a copy named `<name>-x2`, same handler and family), plus the workers.
    const doubled = topologyOf([...operations, ...operations.map((op) => ({ ...op, name: `${op.name}-x2` }))]);
    const big = synth('dev', doubled);
    expect(big.stack.functions.size).toBe(doubled.length);
    for (const [file, count] of Object.entries(big.counts)) expect(count, file).toBeLessThan(500);
    console.info(`doubled (${doubled.length} functions): ${Object.keys(big.counts).length} templates, largest ${Math.max(...Object.values(big.counts))} resources`);
  }, 300_000);
});

// cdk-nag's packs on a probe app (formerly test/cdk/nag.test.ts).
interface Finding {
  plugin: string;
  rule: string;
  severity: string;
  path: string;
}

/**
 * Synthesizes an app with cdk-nag v3's AwsSolutions and Serverless packs as CDK validation
 * plugins and returns every finding that was not acknowledged (lib/nag.ts, lib/api-function.ts).
 */
function nagFindings(build: (app: App) => void): Finding[] {
  const outdir = mkdtempSync(path.join(tmpdir(), 'crm-nag-'));
  // CDK prints the report when validation fails; the findings are asserted below instead.
  const quiet = [vi.spyOn(console, 'error').mockImplementation(() => undefined), vi.spyOn(console, 'log').mockImplementation(() => undefined)];
  try {
    const app = new App({ outdir, context: { 'aws:cdk:bundling-stacks': [] } });
    build(app);
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app), new ServerlessChecks(app));
    try {
      app.synth();
    } catch (error) {
      if (!/ValidationFailed|Validation failed/.test(String(error))) throw error;
    }
    const report = JSON.parse(readFileSync(path.join(outdir, 'validation-report.json'), 'utf8')) as {
      pluginReports: { pluginName: string; violations: { ruleName: string; severity: string; violatingConstructs?: { constructPath: string }[] }[] }[];
    };
    return report.pluginReports.flatMap((plugin) =>
      plugin.violations.flatMap((v) => (v.violatingConstructs ?? [{ constructPath: '?' }]).map((c) => ({ plugin: plugin.pluginName, rule: v.ruleName, severity: v.severity, path: c.constructPath }))),
    );
  } finally {
    for (const spy of quiet) spy.mockRestore();
    rmSync(outdir, { recursive: true, force: true });
  }
}

// The whole app's dev and prod stages are checked with both packs above ('cdk-nag (AwsSolutions +
// Serverless) over the whole app'), on the synthesis the template tests read (one synthesis per stage for both).
describe('cdk-nag (AwsSolutions + Serverless)', () => {
  it('reports a finding that is not acknowledged (the check is live)', () => {
    const findings = nagFindings((app) => {
      new sqs.Queue(new Stack(app, 'Probe'), 'PlainQueue');
    });
    expect(findings.map((f) => f.rule)).toEqual(expect.arrayContaining(['AwsSolutions-SQS4', 'Serverless-SQSRedrivePolicy']));
  }, 60_000);
});

// (formerly test/cdk/feature-flags.test.ts)
interface FlagInfo {
  userValue?: unknown;
  recommendedValue: unknown;
  unconfiguredBehavesLike?: { v2?: unknown };
}

/**
 * `npx cdk synth` warns "N feature flags are not configured" for every flag of aws-cdk-lib whose
 * unconfigured behaviour differs from the recommended value. cdk.json configures each of them
 * (with the behaviour the stack was built and tested with: templates unchanged), so the warning
 * stays away after an aws-cdk-lib upgrade only if this test is kept green.
 */
describe('cdk.json feature flags', () => {
  it('configures every flag the CLI would report as not configured', () => {
    const cdkJson = JSON.parse(readFileSync(path.join(REPO_ROOT, 'cdk.json'), 'utf8')) as { context: Record<string, unknown> };
    const outdir = mkdtempSync(path.join(tmpdir(), 'crm-flags-'));
    try {
      const app = new App({ outdir, context: cdkJson.context });
      new Stack(app, 'Empty');
      const manifest = app.synth().manifest;
      const report = manifest.artifacts?.['aws-cdk-lib/feature-flag-report']?.properties as { flags: Record<string, FlagInfo> } | undefined;
      expect(report, 'the feature-flag report of the cloud assembly').toBeDefined();
      const unconfigured = Object.entries(report!.flags)
        .filter(([, f]) => f.userValue === undefined && JSON.stringify(f.unconfiguredBehavesLike?.v2 ?? false) !== JSON.stringify(f.recommendedValue))
        .map(([name]) => name);
      expect(unconfigured).toEqual([]);
    } finally {
      rmSync(outdir, { recursive: true, force: true });
    }
  });
});
