import { Agent, request } from 'node:http';

export interface ApiAnswer {
  status: number;
  json: { ok: boolean; result?: Record<string, unknown>; error?: unknown };
}

/**
 * The benches' API client: `node:http` over keep-alive connections, the transport the AWS SDK
 * itself uses to reach DynamoDB, so "API against raw DynamoDB" compares the two servers, not two
 * client libraries. (`fetch`, undici, costs ≈ 3 ms more per call than `node:http` on this machine:
 * 12.5 against 9.1 ms p50 for the same `contacts-get`, interleaved, under load.)
 */
export function apiClient(baseUrl: string, token: string): (op: string, body: unknown) => Promise<ApiAnswer> {
  const base = new URL(baseUrl);
  const agent = new Agent({ keepAlive: true });
  return (op, body) =>
    new Promise((resolve, reject) => {
      const data = JSON.stringify(body);
      const req = request(
        { host: base.hostname, port: base.port, path: `/api/${op}`, method: 'POST', agent, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            try {
              resolve({ status: res.statusCode ?? 0, json: JSON.parse(Buffer.concat(chunks).toString('utf8')) as ApiAnswer['json'] });
            } catch (error) {
              reject(error as Error);
            }
          });
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(data);
    });
}

/**
 * A webhook receiver on 127.0.0.1: when each delivery of a record's event arrived (by the
 * record's id), its URL, and its close.
 */
export async function webhookArrivals(): Promise<{ arrived: Map<string, number>; url: (path: string) => string; close: () => void }> {
  const { createServer } = await import('node:http');
  const arrived = new Map<string, number>();
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        const id = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { data?: { id?: string } }).data?.id;
        if (id) arrived.set(id, Date.now());
      } catch {
        // not ours
      }
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
  const port = (receiver.address() as { port: number }).port;
  return { arrived, url: (path) => `http://127.0.0.1:${port}${path}`, close: () => receiver.close() };
}

/** Calls by token on one server, answering the result (a refused call throws with its error). */
export function resultApi(baseUrl: string): <T = Record<string, unknown>>(token: string, op: string, body: unknown) => Promise<T> {
  const clients = new Map<string, ReturnType<typeof apiClient>>();
  return async <T>(token: string, op: string, body: unknown): Promise<T> => {
    if (!clients.has(token)) clients.set(token, apiClient(baseUrl, token));
    const { status, json } = await clients.get(token)!(op, body);
    if (!json.ok) throw new Error(`${op} failed (${status}): ${JSON.stringify(json.error)}`);
    return json.result as T;
  };
}
