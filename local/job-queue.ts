import type { QueueName } from '../functions/topology.js';
import { bindingEnv } from '../shared/config/bindings.js';
import { loadHandler } from './handlers.js';
import type { QueueWorker, QueueWorkerOptions } from './queue-worker.js';
import { ensureBucket, ensureQueue } from './resources.js';
import { queueFunction, startQueueTrigger } from './triggers.js';

export interface LocalJobQueue {
  bucket: string;
  queueUrl: string;
  /** The family's worker on the local queue (drain() waits until it is idle). */
  worker: QueueWorker;
  stop(): Promise<void>;
}

export interface LocalJobQueueOptions {
  bucket?: string;
  queueName?: string;
  /** The worker's handler (tests pass one with injected crashes); default: the topology function's. */
  handler?: QueueWorkerOptions['handler'];
  /** Seconds a failed message waits before it comes back (default: the trigger's local visibility, the job's lease). */
  visibilityTimeoutSeconds?: number;
  onError?: (e: unknown) => void;
}

/**
 * A job family's queue and bucket on an in-process fauxqs, for tests that run one family on its own
 * (local mode creates every resource and worker of the topology itself: local/runtime.ts): its
 * bucket (shared: an existing one is kept), its queue, the variables of its bindings (plus the S3
 * and SQS endpoints, so presigned URLs point at http://127.0.0.1:<port>/<bucket>/…), and the
 * topology's function on that queue, under the queue trigger's adapter (local/triggers.ts).
 */
export async function startLocalJobQueue(
  endpoint: string,
  queue: QueueName,
  defaults: { bucket: string; queueName: string; env: { bucket: 'importsBucket' | 'exportsBucket'; queue: 'importsQueue' | 'exportsQueue' } },
  opts: LocalJobQueueOptions = {},
): Promise<LocalJobQueue> {
  const bucket = opts.bucket ?? defaults.bucket;
  await ensureBucket(endpoint, bucket);
  const queueUrl = await ensureQueue(endpoint, opts.queueName ?? defaults.queueName);
  Object.assign(process.env, { [bindingEnv(defaults.env.bucket)]: bucket, [bindingEnv(defaults.env.queue)]: queueUrl, AWS_ENDPOINT_URL_S3: endpoint, AWS_ENDPOINT_URL_SQS: endpoint });
  const spec = queueFunction(queue);
  const handler = opts.handler ?? (await loadHandler<QueueWorkerOptions['handler']>(spec.entry));
  const worker = startQueueTrigger(spec, handler, { endpoint, queueUrl, visibilityTimeoutSeconds: opts.visibilityTimeoutSeconds, onError: opts.onError });
  return { bucket, queueUrl, worker, stop: () => worker.stop() };
}
