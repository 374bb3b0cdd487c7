/**
 * A webhook receiver for trying the service locally (docs/webhooks.md):
 *
 *   WEBHOOK_SECRET=whsec_… npm run receiver [-- --port 4000] [-- --status 500] [-- --body]
 *   npm run receiver -- --secret whsec_new --secret whsec_old          (rotation: either verifies)
 *   npm run receiver -- --secret whsec_… --forward-to http://127.0.0.1:8080/webhooks
 *
 * Listens on http://127.0.0.1:<port> (any path), verifies each delivery's signature on the raw
 * body with the standardwebhooks library, and prints one line per event: the delivery id
 * (`webhook-id`, the same on every retry), the event type and the record id.
 *
 * - Several secrets (`--secret` repeated, or comma-separated in `--secret`/`WEBHOOK_SECRET`): a
 *   delivery is accepted when any of them verifies one of its signatures, as during a
 *   `webhooks-rotate-secret` grace period (the line says which secret, by its prefix).
 * - `--forward-to URL` (loopback hosts only: localhost, 127.0.0.0/8, [::1]): each verified
 *   delivery is POSTed on to that URL with its raw body and its webhook-* headers (like
 *   `stripe listen --forward-to`), and the service gets that answer's status (502 when the URL
 *   cannot be reached), so its retries follow your app's answers.
 * - Otherwise a valid delivery is answered 204 (or `--status`, e.g. 500 to watch the retries);
 *   a bad or stale signature 400.
 */
import { createServer } from 'node:http';
import { isIP } from 'node:net';
import { parseArgs } from 'node:util';
import { Webhook } from 'standardwebhooks';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: process.env.RECEIVER_PORT ?? '4000' },
    secret: { type: 'string', multiple: true },
    status: { type: 'string', default: '204' },
    'forward-to': { type: 'string' },
    body: { type: 'boolean', default: false },
  },
});

const USAGE = 'usage: WEBHOOK_SECRET=whsec_… npm run receiver [-- --port 4000] [--secret whsec_… (repeatable)] [--status 500] [--forward-to http://127.0.0.1:PORT/PATH] [--body]';
function fail(message: string): never {
  console.error(message);
  console.error(USAGE);
  process.exit(2);
}

const secrets = [...(values.secret ?? []), ...(values.secret ? [] : [process.env.WEBHOOK_SECRET ?? ''])]
  .flatMap((s) => s.split(','))
  .map((s) => s.trim())
  .filter(Boolean);
if (secrets.length === 0) fail('no secret: pass --secret or WEBHOOK_SECRET (the signing_secret that webhooks-create answered)');
const verifiers = secrets.map((secret) => {
  try {
    return { prefix: secret.slice(0, 10), webhook: new Webhook(secret) };
  } catch (error) {
    return fail(`not a webhook secret (${secret.slice(0, 10)}…): ${(error as Error).message}`);
  }
});

const status = Number(values.status);
if (!Number.isInteger(status) || status < 200 || status > 599) fail(`--status must be an HTTP status (got ${values.status})`);

/** Loopback only: this tool never sends events off the machine. */
function forwardTarget(raw: string | undefined): URL | undefined {
  if (raw === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return fail(`--forward-to must be a URL (got ${raw})`);
  }
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const loopback = host === 'localhost' || host === '::1' || (isIP(host) === 4 && host.startsWith('127.'));
  if (!['http:', 'https:'].includes(url.protocol) || !loopback) fail(`--forward-to must be an http(s) URL on this machine (localhost, 127.0.0.1, [::1]); got ${raw}`);
  return url;
}
const forwardTo = forwardTarget(values['forward-to']);

interface WebhookEvent {
  id: string;
  event: string;
  timestamp: string;
  data: { id?: string } & Record<string, unknown>;
}

const FORWARDED_HEADERS = ['content-type', 'webhook-id', 'webhook-timestamp', 'webhook-signature'];

/** Sends the raw delivery on; resolves to the status to answer with and a note for the log line. */
async function forward(raw: string, headers: Record<string, string>): Promise<{ status: number; note: string }> {
  try {
    const res = await fetch(forwardTo!, { method: 'POST', headers, body: raw, redirect: 'manual', signal: AbortSignal.timeout(9_000) });
    await res.arrayBuffer();
    return { status: res.status, note: `forwarded to ${forwardTo!.href}: ${res.status}` };
  } catch (error) {
    const cause = (error as Error & { cause?: { code?: string } }).cause?.code ?? (error as Error).message;
    return { status: 502, note: `forwarding to ${forwardTo!.href} failed (${cause})` };
  }
}

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    void (async () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const headers = Object.fromEntries(FORWARDED_HEADERS.map((h) => [h, String(req.headers[h] ?? '')]));
      let event: WebhookEvent | undefined;
      let verifiedBy = '';
      let lastError = '';
      // Throws on a missing or bad signature, or a timestamp more than 5 minutes off.
      for (const { prefix, webhook } of verifiers) {
        try {
          event = webhook.verify(raw, headers) as WebhookEvent;
          verifiedBy = prefix;
          break;
        } catch (error) {
          lastError = (error as Error).message;
        }
      }
      if (!event) {
        console.error(`rejected ${req.method} ${req.url}: ${lastError}`);
        res.writeHead(400).end();
        return;
      }
      const outcome = forwardTo ? await forward(raw, headers) : { status, note: '' };
      const which = verifiers.length > 1 ? ` (secret ${verifiedBy}…)` : '';
      console.log(`${req.headers['webhook-id']} ${event.event} ${event.data?.id ?? ''}${which} → ${outcome.status}${outcome.note ? ` (${outcome.note})` : ''}`);
      if (values.body) console.log(JSON.stringify(event, null, 2));
      res.writeHead(outcome.status).end();
    })();
  });
});

server.listen(Number(values.port), '127.0.0.1', () => {
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : values.port;
  const answer = forwardTo ? `forwarding verified events to ${forwardTo.href}` : `answering ${status}`;
  console.log(`webhook receiver listening on http://127.0.0.1:${port}/hook (verifying signatures with ${verifiers.length} secret${verifiers.length === 1 ? '' : 's'}; ${answer})`);
});

for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(signal, () => {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  });
}
