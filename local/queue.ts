import { CreateQueueCommand, SQSClient } from '@aws-sdk/client-sqs';
import { buildApp } from 'fauxqs';
import { LOOPBACK } from './dynamo.js';

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
export async function startLocalQueue(queueName: string, opts: { port?: number } = {}): Promise<LocalQueue> {
  const app = buildApp({ logger: false });
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
