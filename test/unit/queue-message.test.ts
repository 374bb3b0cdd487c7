/**
 * A job queue's message is sent without the SQS client (shared/imports/storage.ts
 * `sendQueueMessage`): the request must be the one the client sends (endpoint, target, body,
 * signature's scope), signed for the host it reaches, retried and checked as the client does,
 * and checked by local mode's IAM as an SDK call of the function that makes it.
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { Sha256 } from '@smithy/core/checksum';
import { HttpRequest } from '@smithy/core/protocols';
import { SignatureV4 } from '@smithy/signature-v4';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { functionByName } from '../../functions/topology.js';
import { AccessDeniedException, runAs } from '../../local/iam.js';
import { bindingEnv } from '../../shared/config/bindings.js';
import { sendQueueMessage } from '../../shared/imports/storage.js';

const CREDENTIALS = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret', sessionToken: 'token/with+chars=' };
const ENV = { AWS_ACCESS_KEY_ID: CREDENTIALS.accessKeyId, AWS_SECRET_ACCESS_KEY: CREDENTIALS.secretAccessKey, AWS_SESSION_TOKEN: CREDENTIALS.sessionToken, AWS_REGION: 'eu-west-1' };

interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

const md5 = (s: string) => createHash('md5').update(s).digest('hex');

let server: Server;
let origin: string;
let received: Received[] = [];
/** The answers still to give, first first; then 200 with the body's MD5. */
let answers: Array<{ status: number; body: unknown }> = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      received.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      const next = answers.shift() ?? { status: 200, body: { MD5OfMessageBody: md5(String((JSON.parse(body) as { MessageBody?: string }).MessageBody)), MessageId: 'm-1' } };
      res.writeHead(next.status, { 'content-type': 'application/x-amz-json-1.0' }).end(JSON.stringify(next.body));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

/** The received request's signature, computed again over the headers it says it signed, as received. */
async function verify(r: Received): Promise<void> {
  const auth = String(r.headers.authorization);
  const signed = /SignedHeaders=([^,]+)/.exec(auth)![1]!.split(';');
  const scope = /Credential=[^/]+\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request/.exec(auth)!;
  const date = String(r.headers['x-amz-date']);
  const request = new HttpRequest({
    method: r.method,
    protocol: 'http:',
    hostname: '127.0.0.1',
    path: r.url,
    headers: Object.fromEntries(signed.map((h) => [h, String(r.headers[h])])),
    body: r.body,
  });
  const signer = new SignatureV4({ service: scope[3]!, region: scope[2]!, credentials: CREDENTIALS, sha256: Sha256 });
  const again = await signer.sign(request, { signingDate: new Date(`${date.slice(0, 4)}-${date.slice(4, 6)}-${date.slice(6, 8)}T${date.slice(9, 11)}:${date.slice(11, 13)}:${date.slice(13, 15)}Z`) });
  expect(again.headers.authorization).toBe(auth);
}

describe('job queue messages without the SQS client', () => {
  const saved = { ...process.env };
  beforeEach(() => {
    Object.assign(process.env, ENV);
    delete process.env.AWS_PROFILE;
    delete process.env.AWS_ENDPOINT_URL_SQS;
    received = [];
    answers = [];
  });
  afterEach(() => {
    process.env = { ...saved };
  });

  const cases = [
    { name: 'to AWS_ENDPOINT_URL_SQS (local mode)', endpoint: true, queue: () => 'http://sqs.elsewhere.invalid:9/000000000000/crm-jobs', delay: 30 },
    { name: "to the queue URL's host (deployed)", endpoint: false, queue: () => `${origin}/123456789012/crm-jobs`, delay: undefined },
  ];
  for (const c of cases) {
    it(`sends the request the client sends, ${c.name}`, async () => {
      if (c.endpoint) process.env.AWS_ENDPOINT_URL_SQS = origin;
      const body = JSON.stringify({ account_id: 'acc-1', export_id: 'é+/x' });
      await sendQueueMessage(c.queue(), body, c.delay);
      const client = new SQSClient({ maxAttempts: 4, ...(c.endpoint ? { endpoint: origin, useQueueUrlAsEndpoint: false } : {}) });
      await client.send(new SendMessageCommand({ QueueUrl: c.queue(), MessageBody: body, ...(c.delay ? { DelaySeconds: c.delay } : {}) }));
      expect(received).toHaveLength(2);
      const [ours, sdk] = received as [Received, Received];
      expect(ours.method).toBe(sdk.method);
      expect(ours.url).toBe(sdk.url);
      expect(ours.headers.host).toBe(sdk.headers.host);
      for (const h of ['content-type', 'x-amz-target', 'x-amz-security-token']) expect(ours.headers[h], h).toBe(sdk.headers[h]);
      expect(JSON.parse(ours.body)).toEqual(JSON.parse(sdk.body));
      const scope = (r: Received) => /Credential=([^,]+)/.exec(String(r.headers.authorization))![1]!.replace(/\/\d{8}\//, '/<date>/');
      expect(scope(ours)).toBe(scope(sdk));
      expect(String(ours.headers.authorization).split('SignedHeaders=')[1]).toContain('host');
      await verify(ours);
    });
  }

  it('retries a 5xx and throttling as the client does, then sends once', async () => {
    process.env.AWS_ENDPOINT_URL_SQS = origin;
    answers = [
      { status: 500, body: { __type: 'com.amazonaws.sqs#InternalError', message: 'try again' } },
      { status: 400, body: { __type: 'com.amazonaws.sqs#RequestThrottled', message: 'slow down' } },
    ];
    await sendQueueMessage(`${origin}/000000000000/q`, '{"a":1}');
    expect(received).toHaveLength(3);
    for (const r of received) await verify(r);
  });

  it('fails at once on an error that is not retried, with SQS\'s code and message', async () => {
    process.env.AWS_ENDPOINT_URL_SQS = origin;
    answers = [{ status: 400, body: { __type: 'com.amazonaws.sqs#QueueDoesNotExist', message: 'The specified queue does not exist.' } }];
    await expect(sendQueueMessage(`${origin}/000000000000/gone`, '{}')).rejects.toThrow('SQS SendMessage: HTTP 400 QueueDoesNotExist: The specified queue does not exist.');
    expect(received).toHaveLength(1);
  });

  it('gives up after 4 attempts', async () => {
    process.env.AWS_ENDPOINT_URL_SQS = origin;
    answers = Array.from({ length: 4 }, () => ({ status: 503, body: { __type: 'ServiceUnavailable', message: 'down' } }));
    await expect(sendQueueMessage(`${origin}/000000000000/q`, '{}')).rejects.toThrow('HTTP 503 ServiceUnavailable: down after 4 attempts');
    expect(received).toHaveLength(4);
  });

  it('is an SDK call of the function to local mode\'s IAM: sent with the grant, refused without', async () => {
    process.env.AWS_ENDPOINT_URL_SQS = origin;
    const queue = `${origin}/000000000000/crm-exports-test`;
    process.env[bindingEnv('exportsQueue')] = queue;
    await runAs(functionByName('exports-create')!, () => sendQueueMessage(queue, '{"c":3}'));
    expect(received).toHaveLength(1);
    await expect(runAs(functionByName('imports-create')!, () => sendQueueMessage(queue, '{"c":4}'))).rejects.toBeInstanceOf(AccessDeniedException);
    expect(received).toHaveLength(1);
  });

  it('refuses an answer whose MD5 is not the message\'s', async () => {
    process.env.AWS_ENDPOINT_URL_SQS = origin;
    answers = [{ status: 200, body: { MD5OfMessageBody: md5('something else'), MessageId: 'm-2' } }];
    await expect(sendQueueMessage(`${origin}/000000000000/q`, '{"b":2}')).rejects.toThrow('InvalidChecksumError');
  });
});
