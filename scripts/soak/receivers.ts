/**
 * The soak's webhook receivers, in its own process on 127.0.0.1 (loopback only): per account one
 * healthy endpoint (200 at once), one slow (200 after 3 s) and one failing (500). Each records
 * what it got; signatures are not checked (the delivery tests do that).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type HookKind = 'healthy' | 'slow' | 'failing';

export interface Receipt {
  event: string;
  recordId: string;
  /** Epoch ms of the first delivery of this event id. */
  firstAt: number;
  /** The distinct `webhook-id`s (delivery ids) that carried it. */
  deliveryIds: Set<string>;
  /** Requests that carried it (a retry of one delivery repeats its webhook-id). */
  requests: number;
}

export class Hook {
  readonly receipts = new Map<string, Receipt>();
  requests = 0;
  /** Requests without a parsable body or webhook-id. */
  malformed = 0;
  constructor(
    readonly path: string,
    readonly kind: HookKind,
  ) {}
}

const SLOW_MS = 3_000;

export class Receivers {
  private readonly hooks = new Map<string, Hook>();
  private readonly server = createServer((req, res) => this.handle(req, res));
  private readonly timers = new Set<NodeJS.Timeout>();
  baseUrl = '';

  async start(): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(0, '127.0.0.1', () => resolve());
    });
    this.baseUrl = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  hook(account: string, kind: HookKind): Hook {
    const path = `/hooks/${account}/${kind}`;
    const hook = new Hook(path, kind);
    this.hooks.set(path, hook);
    return hook;
  }

  url(hook: Hook): string {
    return `${this.baseUrl}${hook.path}`;
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = Date.now();
      const hook = this.hooks.get((req.url ?? '').split('?')[0] ?? '');
      if (!hook) {
        res.writeHead(404).end();
        return;
      }
      hook.requests++;
      const deliveryId = String(req.headers['webhook-id'] ?? '');
      let body: { id?: unknown; event?: unknown; record_id?: unknown } | undefined;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as typeof body;
      } catch {
        body = undefined;
      }
      if (!body || typeof body.id !== 'string' || !deliveryId) hook.malformed++;
      else {
        const seen = hook.receipts.get(body.id);
        if (seen) {
          seen.deliveryIds.add(deliveryId);
          seen.requests++;
        } else hook.receipts.set(body.id, { event: String(body.event), recordId: String(body.record_id ?? ''), firstAt: at, deliveryIds: new Set([deliveryId]), requests: 1 });
      }
      if (hook.kind === 'healthy') res.writeHead(200).end('ok');
      else if (hook.kind === 'failing') res.writeHead(500).end('failing on purpose');
      else {
        const timer = setTimeout(() => {
          this.timers.delete(timer);
          res.writeHead(200).end('ok, slowly');
        }, SLOW_MS);
        this.timers.add(timer);
      }
    });
  }

  async stop(): Promise<void> {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }
}
