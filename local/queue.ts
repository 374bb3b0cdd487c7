import { CreateQueueCommand, SQSClient } from '@aws-sdk/client-sqs';
import { buildApp } from 'fauxqs';
import { LOOPBACK } from './dynamo.js';
import { persistentS3Store, requireSignedS3 } from './object-store.js';

export interface LocalQueue {
  /** The SQS endpoint (http://127.0.0.1:<port>). */
  endpoint: string;
  port: number;
  queueUrl: string;
  stop(): Promise<void>;
}

/**
 * An SQS-compatible queue in this process (fauxqs), listening on 127.0.0.1 only. fauxqs's own
 * `startFauxqs` always listens on 0.0.0.0, so this builds its app and listens itself; the queue
 * is created through the SQS API like any client would.
 */
export async function startLocalQueue(queueName: string, opts: { port?: number; objectDir?: string } = {}): Promise<LocalQueue> {
  // With a data directory, the S3 objects (import files) are kept on disk too (local/object-store.ts).
  const s3Store = opts.objectDir ? await persistentS3Store(opts.objectDir) : undefined;
  const app = buildApp({ logger: false, ...(s3Store ? { stores: { s3Store } as unknown as NonNullable<Parameters<typeof buildApp>[0]>['stores'] } : {}) });
  // A PUT with an empty body (a 0-byte file) reaches fauxqs's handler without a body, which it
  // answers with a 500 and its internal error text: it is an empty object, as S3 stores it.
  app.addHook('preHandler', async (request) => {
    if (request.method === 'PUT' && request.body === undefined) request.body = Buffer.alloc(0);
  });
  // Like S3: unsigned, expired or forged requests are refused (presigned URLs and SDK calls alike).
  requireSignedS3(app as never);
  await app.listen({ port: opts.port ?? 0, host: LOOPBACK });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const endpoint = `http://${LOOPBACK}:${port}`;
  const sqs = new SQSClient({ endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  try {
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: queueName }));
    if (!QueueUrl) throw new Error(`local queue ${queueName}: no queue URL`);
    return { endpoint, port, queueUrl: QueueUrl, stop: () => app.close() };
  } catch (error) {
    await app.close();
    throw error;
  } finally {
    sqs.destroy();
  }
}
