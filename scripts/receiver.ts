/**
 * A webhook receiver for trying the service locally (docs/webhooks.md):
 *
 *   WEBHOOK_SECRET=whsec_… npm run receiver [-- --port 4000] [-- --status 500]
 *
 * Listens on http://127.0.0.1:<port> (any path), verifies each delivery's signature on the raw
 * body with the standardwebhooks library, and prints one line per event: the delivery id
 * (`webhook-id`, the same on every retry), the event type and the record id. A valid delivery
 * is answered 204 (or `--status`, e.g. 500 to watch the retries); a bad or stale signature 400.
 * Add `--body` to print each event's JSON as well.
 */
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';
import { Webhook } from 'standardwebhooks';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: process.env.RECEIVER_PORT ?? '4000' },
    secret: { type: 'string', default: process.env.WEBHOOK_SECRET },
    status: { type: 'string', default: '204' },
    body: { type: 'boolean', default: false },
  },
});

if (!values.secret) {
  console.error('usage: WEBHOOK_SECRET=whsec_… npm run receiver [-- --port 4000] [-- --status 500] [-- --body]');
  console.error('(the signing_secret that webhooks-create answered)');
  process.exit(2);
}
const status = Number(values.status);
if (!Number.isInteger(status) || status < 200 || status > 599) {
  console.error(`--status must be an HTTP status (got ${values.status})`);
  process.exit(2);
}

interface WebhookEvent {
  id: string;
  event: string;
  timestamp: string;
  data: { id?: string } & Record<string, unknown>;
}

const webhook = new Webhook(values.secret);
const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const raw = Buffer.concat(chunks).toString('utf8');
    try {
      // Throws on a missing or bad signature, or a timestamp more than 5 minutes off.
      const event = webhook.verify(raw, {
        'webhook-id': String(req.headers['webhook-id'] ?? ''),
        'webhook-timestamp': String(req.headers['webhook-timestamp'] ?? ''),
        'webhook-signature': String(req.headers['webhook-signature'] ?? ''),
      }) as WebhookEvent;
      console.log(`${req.headers['webhook-id']} ${event.event} ${event.data?.id ?? ''} → ${status}`);
      if (values.body) console.log(JSON.stringify(event, null, 2));
      res.writeHead(status).end();
    } catch (error) {
      console.error(`rejected ${req.method} ${req.url}: ${(error as Error).message}`);
      res.writeHead(400).end();
    }
  });
});

server.listen(Number(values.port), '127.0.0.1', () => {
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : values.port;
  console.log(`webhook receiver listening on http://127.0.0.1:${port}/hook (verifying signatures; answering ${status})`);
});

for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(signal, () => {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  });
}
