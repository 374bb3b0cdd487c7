/**
 * A child process for test/integration/crash-drill.test.ts: starts DynamoDB Local on `dataDir`,
 * runs four parallel loops of transactions through the data layer's client (shared/db/client.ts),
 * and kill -9s the Java process right after the 100th acknowledgement. Prints the acknowledged
 * keys as JSON, then exits. With `check`, prints which of the given keys are missing instead.
 */
import { readFileSync } from 'node:fs';
import { GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { ensureTable, LOCAL_AWS_ENV, startDynamo } from '../../local/dynamo.js';

const [mode, dataDir, keysFile] = process.argv.slice(2) as ['write' | 'check', string, string | undefined];
const dynamo = await startDynamo({ dataDir });
Object.assign(process.env, LOCAL_AWS_ENV, { DYNAMODB_ENDPOINT: dynamo.endpoint, TABLE_NAME: 'crm-durability' });
await ensureTable(dynamo.endpoint, 'crm-durability');
const { db } = await import('../../shared/db/client.js');

if (mode === 'write') {
  const acked: string[] = [];
  let stop = false;
  await Promise.all(
    Array.from({ length: 4 }, async (_, loop) => {
      for (let i = 0; !stop; i++) {
        const pk = `durable-${Date.now()}-${loop}-${i}`;
        try {
          await db().send(new TransactWriteCommand({ TransactItems: [{ Put: { TableName: 'crm-durability', Item: { pk, sk: 'R' } } }, { Put: { TableName: 'crm-durability', Item: { pk, sk: 'I' } } }] }));
        } catch {
          return;
        }
        if (stop) return;
        acked.push(pk);
        if (acked.length === 100) {
          stop = true;
          process.kill(dynamo.pid!, 'SIGKILL');
        }
      }
    }),
  );
  process.stdout.write(JSON.stringify(acked));
} else {
  const keys = JSON.parse(readFileSync(keysFile!, 'utf8')) as string[];
  const missing: string[] = [];
  for (const pk of keys) if (!(await db().send(new GetCommand({ TableName: 'crm-durability', Key: { pk, sk: 'R' } }))).Item) missing.push(pk);
  process.stdout.write(JSON.stringify(missing));
  await dynamo.stop();
}
process.exit(0);
