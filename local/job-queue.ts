import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { CreateQueueCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { QueueWorker } from './queue-worker.js';

const LOCAL_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' };

export interface LocalJobQueue {
  bucket: string;
  queueUrl: string;
  /** The family's worker on the local queue (drain() waits until it is idle). */
  worker: QueueWorker;
  stop(): Promise<void>;
}

/**
 * A job family's local resources (imports, exports) on the in-process fauxqs, which speaks S3 on
 * the same port (addressed path-style): its bucket (shared: an existing one is kept), its queue,
 * the variables its handlers read (`env(bucket, queueUrl)`, plus the S3 and SQS endpoints, so
 * presigned URLs point at http://127.0.0.1:<port>/<bucket>/…), and its worker, unless
 * `startWorker` is false (the worker runs elsewhere: local/workers-thread.ts).
 */
export async function startLocalJobQueue(
  endpoint: string,
  opts: { bucket: string; queueName: string; env: (bucket: string, queueUrl: string) => Record<string, string>; startWorker: false | ((queueUrl: string) => QueueWorker) },
): Promise<LocalJobQueue> {
  const s3 = new S3Client({ endpoint, forcePathStyle: true, region: 'us-east-1', credentials: LOCAL_CREDENTIALS });
  const sqs = new SQSClient({ endpoint, region: 'us-east-1', credentials: LOCAL_CREDENTIALS });
  try {
    await s3.send(new CreateBucketCommand({ Bucket: opts.bucket })).catch((error: { name?: string }) => {
      if (error.name !== 'BucketAlreadyOwnedByYou' && error.name !== 'BucketAlreadyExists') throw error;
    });
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: opts.queueName }));
    if (!QueueUrl) throw new Error(`local queue ${opts.queueName}: no queue URL`);
    Object.assign(process.env, opts.env(opts.bucket, QueueUrl), { AWS_ENDPOINT_URL_S3: endpoint, AWS_ENDPOINT_URL_SQS: endpoint });
    if (!opts.startWorker) {
      const idle: QueueWorker = { stop: async () => undefined, drain: async () => undefined };
      return { bucket: opts.bucket, queueUrl: QueueUrl, worker: idle, stop: async () => undefined };
    }
    const worker = opts.startWorker(QueueUrl);
    return { bucket: opts.bucket, queueUrl: QueueUrl, worker, stop: () => worker.stop() };
  } finally {
    s3.destroy();
    sqs.destroy();
  }
}
