import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type FauxqsServer, startFauxqs } from 'fauxqs';
import { Webhook } from 'standardwebhooks';
import { deliveryHandler } from '../../functions/delivery/handler.js';
import { type QueueWorker, startQueueWorker } from '../../local/queue-worker.js';
import type { StreamPoller } from '../../local/stream-poller.js';
import type { AuthContext } from '../../shared/http/operation.js';
import type { WebhookDelivery, WebhookEndpoint } from '../../shared/schemas/webhooks.js';
import { parseDeliveryRef } from '../../shared/webhooks/queue.js';
import type { WorkerDeps } from '../../shared/webhooks/worker.js';
import { functionByName } from '../../functions/topology.js';
import { asFunction } from '../../local/iam.js';
import { ok } from './api.js';
import { startTestStream } from './stream.js';

/** One request a receiver got, with the standardwebhooks library's verdict on its signature. */
export interface Received {
  path: string;
  headers: Record<string, string>;
  body: string;
  verified: boolean;
  payload?: { id: string; event: string; timestamp: string; data: Record<string, unknown> };
  at: number;
}

type Behaviour = (req: IncomingMessage, res: ServerResponse, n: number) => void;

export const reply = (status: number, headers: Record<string, string> = {}): Behaviour => (_req, res) => {
  res.writeHead(status, headers);
  res.end('ok');
};

/** Never answers (the attempt's time-out ends it). */
export const hang = (): Behaviour => () => undefined;

/**
 * Answers `status` at once, then trickles the body one byte per `everyMs`, never finishing on
 * its own. `closed` resolves when the client closed the connection, with the time it took.
 */
export function trickle(status: number, everyMs = 1_000): { behaviour: Behaviour; closed: Promise<number>[] } {
  const closed: Promise<number>[] = [];
  const behaviour: Behaviour = (_req, res) => {
    const start = Date.now();
    res.writeHead(status, { 'content-type': 'text/plain' });
    res.write('.');
    const timer = setInterval(() => res.write('.'), everyMs);
    closed.push(new Promise((resolve) => res.on('close', () => {
      clearInterval(timer);
      resolve(Date.now() - start);
    })));
  };
  return { behaviour, closed };
}

/**
 * A real HTTP receiver on 127.0.0.1 (random port). Each path has its own behaviour and secret;
 * every request is checked with `new Webhook(secret).verify(body, headers)`.
 */
export class Receiver {
  readonly received: Received[] = [];
  private behaviours = new Map<string, Behaviour>();
  private secrets = new Map<string, string>();
  private counts = new Map<string, number>();
  private server = createServer((req, res) => void this.handle(req, res));
  baseUrl = '';

  async start(): Promise<this> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', () => r()));
    this.baseUrl = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  /** Sets how `path` answers (default 200). */
  on(path: string, behaviour: Behaviour): this {
    this.behaviours.set(path, behaviour);
    return this;
  }

  secret(path: string, secret: string): void {
    this.secrets.set(path, secret);
  }

  at(path: string): Received[] {
    return this.received.filter((r) => r.path === path);
  }

  /** Whether `secret` alone verifies what `r` carried (standardwebhooks library). */
  static verifies(r: Received, secret: string): boolean {
    try {
      new Webhook(secret).verify(r.body, r.headers);
      return true;
    } catch {
      return false;
    }
  }

  private async handle(req: IncomingMessage, res: ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const path = req.url ?? '/';
    const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
    let verified = false;
    let payload: Received['payload'];
    const secret = this.secrets.get(path);
    if (secret) {
      try {
        payload = new Webhook(secret).verify(body, headers) as Received['payload'];
        verified = true;
      } catch {
        verified = false;
      }
    }
    this.received.push({ path, headers, body, verified, payload, at: Date.now() });
    const n = (this.counts.get(path) ?? 0) + 1;
    this.counts.set(path, n);
    (this.behaviours.get(path) ?? reply(200))(req, res, n);
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((r) => this.server.close(() => r()));
  }
}

export interface Pipeline {
  queue: FauxqsServer;
  queueName: string;
  queueUrl: string;
  /** The fauxqs endpoint (SQS) of the delivery queue, and of the changes queue. */
  endpoint: string;
  /** The record changes' path (stream → changes queue on this pipeline's fauxqs → changes worker); absent with `stream: false`. */
  poller?: StreamPoller;
  worker: QueueWorker;
  /** Resolves when the stream worker and the delivery queue are both idle (nothing more will arrive now). */
  idle(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * This test file's delivery pipeline: the delivery queue on a fauxqs of its own, the record changes'
 * path as `npm start` runs it (the stream routing to the changes queue and the changes worker:
 * test/helpers/stream.ts) and the delivery worker. `stream: false` leaves the path out (a test
 * that starts it later, or hands the changes worker its messages itself).
 */
export async function startPipeline(opts: { visibilityTimeoutSeconds?: number; stream?: boolean; workerDeps?: Partial<WorkerDeps>; concurrency?: number } = {}): Promise<Pipeline> {
  const queue = await startFauxqs({ port: 0, logger: false });
  const queueName = 'webhook-deliveries-test';
  const { queueUrl } = queue.createQueue(queueName);
  const endpoint = `http://127.0.0.1:${queue.port}`;
  Object.assign(process.env, { DELIVERY_QUEUE_URL: queueUrl, AWS_ENDPOINT_URL_SQS: endpoint });
  const worker = startQueueWorker({
    endpoint,
    queueUrl,
    handler: asFunction(functionByName('delivery')!, deliveryHandler(opts.workerDeps)),
    visibilityTimeoutSeconds: opts.visibilityTimeoutSeconds ?? 1,
    waitTimeSeconds: 1,
    groupOf: (body) => parseDeliveryRef(body)?.endpoint_id,
    ...(opts.concurrency ? { concurrency: opts.concurrency } : {}),
  });
  const poller = opts.stream === false ? undefined : await startTestStream({ awsEndpoint: endpoint, onError: (e) => console.error('changes path error', e) });
  return {
    queue,
    queueName,
    queueUrl,
    endpoint,
    poller,
    worker,
    async idle() {
      await poller?.drain();
      await worker.drain();
      await poller?.drain();
    },
    async stop() {
      await poller?.stop();
      await worker.stop();
      await queue.stop();
    },
  };
}

/** Polls `fn` until it returns a truthy value (or throws after `timeoutMs`). */
export async function waitFor<T>(fn: () => Promise<T> | T, timeoutMs = 10_000, what = 'condition'): Promise<NonNullable<T>> {
  const start = Date.now();
  for (;;) {
    const value = await fn();
    if (value) return value as NonNullable<T>;
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Creates an endpoint pointing at `receiver` + `path` and registers its secret with the receiver. */
export async function registerEndpoint(auth: AuthContext, receiver: Receiver, path: string, events: string[], description?: string): Promise<WebhookEndpoint> {
  const out = await ok<{ endpoint: WebhookEndpoint; signing_secret: string }>(
    'webhooks-create',
    { url: `${receiver.baseUrl}${path}`, events, ...(description ? { description } : {}) },
    auth,
  );
  receiver.secret(path, out.signing_secret);
  return out.endpoint;
}

export async function deliveriesOf(auth: AuthContext, endpointId: string, limit?: number): Promise<WebhookDelivery[]> {
  return (await ok<{ deliveries: WebhookDelivery[] }>('webhooks-deliveries', { endpoint_id: endpointId, ...(limit ? { limit } : {}) }, auth)).deliveries;
}

/** Waits until every delivery of the endpoint is finished and there are at least `count`. */
export function settledDeliveries(auth: AuthContext, endpointId: string, count: number, timeoutMs = 10_000): Promise<WebhookDelivery[]> {
  return waitFor(
    async () => {
      const ds = await deliveriesOf(auth, endpointId);
      return ds.length >= count && ds.every((d) => d.status !== 'pending') ? ds : undefined;
    },
    timeoutMs,
    `${count} finished deliveries`,
  );
}
