/**
 * The job queues' messages (imports, exports, erasures, index builds): the only SQS calls of the
 * jobs (an import's file is the domain's: shared/domain/imports.ts).
 * Deployed, `IMPORTS_QUEUE_URL` comes from the stack (lib/imports.ts).
 * Locally, `AWS_ENDPOINT_URL_S3` / `AWS_ENDPOINT_URL_SQS` (the SDK's own variables) point at the
 * in-process fauxqs, addressed path-style (`http://127.0.0.1:<port>/<bucket>/<key>`).
 */
import { createHash } from 'node:crypto';
import { defaultProvider } from '@aws-sdk/credential-provider-node';
import { Sha256 } from '@smithy/core/checksum';
import { Client, Command, type SmithyResolvedConfiguration } from '@smithy/core/client';
import { loadConfig, NODE_REGION_CONFIG_FILE_OPTIONS, NODE_REGION_CONFIG_OPTIONS } from '@smithy/core/config';
import { HttpRequest } from '@smithy/core/protocols';
import { SignatureV4 } from '@smithy/signature-v4';
import { CALL_TIME_LIMITS } from '../config/call-limits.js';
import { optionalEnv, requireEnv } from '../config/env.js';
import { bindingEnv } from '../config/bindings.js';
import type { JobFairness } from '../http/job-handler.js';

const importsQueueUrl = () => requireEnv(bindingEnv('importsQueue'));

/** A job queue's message: which job of which account to work on (`id` names the job's id field). */
export type JobMessage<K extends string> = { account_id: string } & Record<K, string>;

/**
 * A job queue's messages (imports, exports, erasures, index builds): `parse` reads one strictly
 * (anything else is malformed and dropped by the worker), `enqueue` sends one to the queue.
 */
export function jobMessages<K extends string>(idField: K, queueUrl: () => string) {
  return {
    parse(body: string): JobMessage<K> | undefined {
      try {
        const m = JSON.parse(body) as Record<string, unknown> | null;
        const id = m?.[idField];
        if (typeof m?.account_id === 'string' && typeof id === 'string') return { account_id: m.account_id, [idField]: id } as JobMessage<K>;
      } catch {
        // not JSON
      }
      return undefined;
    },
    enqueue: (message: JobMessage<K>) => sendQueueMessage(queueUrl(), JSON.stringify(message)),
    /** The queue's per-account cap (shared/http/job-handler.ts): `queue` names its places, a job put back is sent again after a delay. */
    fairness: (queue: string, perAccount: number): JobFairness<JobMessage<K>> => ({
      queue,
      perAccount,
      of: (m) => ({ accountId: m.account_id, jobId: m[idField] }),
      defer: (m, delaySeconds) => sendQueueMessage(queueUrl(), JSON.stringify(m), delaySeconds),
      wake: (accountId, jobId) => sendQueueMessage(queueUrl(), JSON.stringify({ account_id: accountId, [idField]: jobId })),
    }),
  };
}

/** The import queue's message: which job to work on. */
export type ImportMessage = JobMessage<'import_id'>;
export const { parse: parseImportMessage, enqueue: enqueueImport, fairness: importQueueFairness } = jobMessages('import_id', importsQueueUrl);

let sqsSigner: { endpoint: string | undefined; signer: SignatureV4 } | undefined;

/** The signer with the credentials and region the SQS client would resolve (the default chain; Lambda: the environment). */
function signer(endpoint: string | undefined): SignatureV4 {
  if (!sqsSigner || sqsSigner.endpoint !== endpoint) {
    const region = loadConfig(NODE_REGION_CONFIG_OPTIONS, NODE_REGION_CONFIG_FILE_OPTIONS);
    sqsSigner = { endpoint, signer: new SignatureV4({ service: 'sqs', region, credentials: defaultProvider(), sha256: Sha256 }) };
  }
  return sqsSigner.signer;
}

const MAX_ATTEMPTS = 4;

/** Throttling error codes of the SQS JSON protocol (`__type`), retried like a 5xx. */
const THROTTLED = /(^|#)(RequestThrottled|ThrottlingException|Throttling|TooManyRequestsException|KmsThrottled)$/;

/**
 * Sends a message to a job queue: SQS's SendMessage in its JSON protocol, the request the SQS
 * client sends, signed by the SDK's own signer and sent with `fetch`. The API operations that
 * enqueue a job (exports-create, erasures-create, imports-create/-start, custom-fields-create/
 * -update) do not bundle the SQS client (~25 KB: the schemas and error models of every SQS
 * operation). As the client configured with `maxAttempts: 4` and CALL_TIME_LIMITS: to
 * `AWS_ENDPOINT_URL_SQS` when set, else to the queue URL's host; up to 4 attempts on a network
 * error, a timeout (CALL_TIME_LIMITS.requestTimeout), throttling or 5xx, after a random delay
 * under 100 ms × 2^attempt; the answer's MD5 of the body checked. Any other answer fails with
 * SQS's error code and message. test/unit/queue-message.test.ts holds it to the client's request.
 *
 * The call goes through the SDK's own `Client` (a client of this one command, without the SQS
 * client's protocol and middleware), so that local mode checks it against the function's policy
 * and tracks it as it does every SDK call (local/iam.ts).
 */
export async function sendQueueMessage(queueUrl: string, body: string, delaySeconds?: number): Promise<void> {
  await jobQueueClient().send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: body, ...(delaySeconds ? { DelaySeconds: delaySeconds } : {}) }));
}

interface SendMessageInput {
  QueueUrl: string;
  MessageBody: string;
  DelaySeconds?: number;
}

interface SendMessageOutput {
  $metadata: { httpStatusCode?: number };
}

type JobQueueConfig = SmithyResolvedConfiguration<object> & { serviceId: 'SQS' };

class SendMessageCommand extends Command<SendMessageInput, SendMessageOutput, JobQueueConfig> {
  constructor(readonly input: SendMessageInput) {
    super();
  }

  resolveMiddleware() {
    return async () => ({ output: await sendMessage(this.input), response: undefined });
  }
}

let jobQueue: Client<object, SendMessageInput, SendMessageOutput, JobQueueConfig> | undefined;

function jobQueueClient() {
  jobQueue ??= new Client<object, SendMessageInput, SendMessageOutput, JobQueueConfig>({
    serviceId: 'SQS',
    apiVersion: '2012-11-05',
    // Unused: the command sends its own request (sendMessage).
    requestHandler: { handle: () => Promise.reject(new Error('the job queue client sends through sendMessage')) },
  });
  return jobQueue;
}

async function sendMessage(input: SendMessageInput): Promise<SendMessageOutput> {
  const endpoint = optionalEnv('AWS_ENDPOINT_URL_SQS');
  const base = new URL(endpoint ?? input.QueueUrl);
  const payload = JSON.stringify(input);
  const path = endpoint ? base.pathname : '/';
  const url = `${base.protocol}//${base.host}${path}`;
  for (let attempt = 1; ; attempt++) {
    // Signed at each attempt, as the client does (the signature carries the time).
    const request = await signer(endpoint).sign(
      new HttpRequest({
        method: 'POST',
        protocol: base.protocol,
        hostname: base.hostname,
        ...(base.port ? { port: Number(base.port) } : {}),
        path,
        headers: { host: base.host, 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': 'AmazonSQS.SendMessage' },
        body: payload,
      }),
    );
    const { host: _host, ...headers } = request.headers;
    let res: Response | undefined;
    try {
      res = await fetch(url, { method: 'POST', headers, body: payload, signal: AbortSignal.timeout(CALL_TIME_LIMITS.requestTimeout) });
    } catch (error) {
      if (attempt >= MAX_ATTEMPTS) throw error;
    }
    if (res?.ok) {
      const out = (await res.json()) as { MD5OfMessageBody?: string };
      if (out.MD5OfMessageBody !== createHash('md5').update(input.MessageBody).digest('hex')) throw new Error('SQS SendMessage: InvalidChecksumError (MD5OfMessageBody is not the MD5 of the message)');
      return { $metadata: { httpStatusCode: res.status } };
    }
    if (res) {
      const error = sqsError(await res.text());
      const retryable = res.status === 429 || res.status >= 500 || THROTTLED.test(error.type);
      if (!retryable || attempt >= MAX_ATTEMPTS) throw new Error(`SQS SendMessage: HTTP ${res.status} ${error.type.replace(/^.*#/, '')}${error.message ? `: ${error.message}` : ''}${retryable ? ` after ${attempt} attempts` : ''}`);
    }
    await new Promise((r) => setTimeout(r, Math.random() * 100 * 2 ** attempt));
  }
}

/** SQS's error type and message from its JSON error body (`{"__type":"com.amazonaws.sqs#QueueDoesNotExist","message":"…"}`). */
function sqsError(text: string): { type: string; message: string } {
  try {
    const body = JSON.parse(text) as { __type?: unknown; message?: unknown; Message?: unknown };
    return { type: typeof body.__type === 'string' ? body.__type : '', message: String(body.message ?? body.Message ?? '').slice(0, 300) };
  } catch {
    return { type: '', message: text.slice(0, 300) };
  }
}
