/**
 * The state of local mode's asynchronous half, for `npm run status` (GET /_local/status of
 * `npm start`): each queue's backlog (visible, in flight, delayed) and the age of its oldest
 * message, and each background function's work in hand and last progress (the stream poller's
 * and the queue workers' own accounts: local/stream-poller.ts, local/queue-worker.ts).
 */
import type { StaticRoute } from './server.js';

export interface QueueStatus {
  queue: string;
  visible: number;
  inFlight: number;
  delayed: number;
  /** Age of the oldest message, visible, in flight or delayed (0 when empty). */
  oldestAgeMs: number;
}

export interface LocalStatus {
  at: string;
  queues: QueueStatus[];
  functions: Record<string, unknown>;
}

interface FauxqsQueue {
  name: string;
  approximateMessageCount: number;
  approximateInflightCount: number;
  approximateDelayedCount: number;
}
interface FauxqsMessage {
  sentTimestamp?: number;
}

/** Every local queue's backlog, read from fauxqs's inspection endpoints (nothing is received or changed). */
export async function queueStatuses(endpoint: string): Promise<QueueStatus[]> {
  const queues = (await (await fetch(`${endpoint}/_fauxqs/queues`)).json()) as FauxqsQueue[];
  const now = Date.now();
  return Promise.all(
    queues.map(async (q) => {
      const { messages: detail = {} } = (await (await fetch(`${endpoint}/_fauxqs/queues/${encodeURIComponent(q.name)}`)).json()) as { messages?: { ready?: FauxqsMessage[]; delayed?: FauxqsMessage[]; inflight?: Array<{ message: FauxqsMessage }> } };
      const sent = [...(detail.ready ?? []), ...(detail.delayed ?? []), ...(detail.inflight ?? []).map((e) => e.message)].map((m) => m.sentTimestamp).filter((t): t is number => typeof t === 'number');
      return { queue: q.name, visible: q.approximateMessageCount, inFlight: q.approximateInflightCount, delayed: q.approximateDelayedCount, oldestAgeMs: sent.length ? now - Math.min(...sent) : 0 };
    }),
  );
}

/** GET /_local/status: the state as JSON. */
export function statusRoute(read: () => Promise<LocalStatus>): StaticRoute {
  return async (req, res) => {
    if (req.method !== 'GET' || req.url?.split('?')[0] !== '/_local/status') return false;
    const body = JSON.stringify(await read());
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(body);
    return true;
  };
}
