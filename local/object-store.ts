/**
 * The local object store. Its access: every S3 request must be signed with the local key
 * (checkSignature: presigned URLs and SDK calls, as S3 checks them; the SQS and SNS endpoint
 * `POST /` is not concerned). Its files on disk: fauxqs keeps S3 objects in memory; with
 * `CRM_DATA_DIR` local mode keeps them in `<dir>/objects/<bucket>/` as well (written and
 * synced before the PUT is answered), and loads them again at start, so an import's file (an
 * upload or an inline `csv`) is still there when a job resumes after a restart or a crash
 * (contract §7, §10). Without a data directory nothing is written.
 */
import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import { closeSync, fsyncSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Sha256 } from '@smithy/core/checksum';
import { SignatureV4 } from '@smithy/signature-v4';
import { LOCAL_AWS_ENV } from './dynamo.js';

/** The part of fauxqs's S3 store this module uses (its class is not exported by the package's entry point). */
export interface S3StoreLike {
  createBucket(name: string): void;
  putObject(bucket: string, key: string, body: Buffer, contentType?: string, metadata?: Record<string, string>): unknown;
  deleteObject(bucket: string, key: string): void;
  completeMultipartUpload(uploadId: string, parts: unknown[]): { key: string; body: Buffer; contentType?: string; metadata?: Record<string, string> };
}

type S3StoreClass = new () => S3StoreLike;

async function s3StoreClass(): Promise<S3StoreClass> {
  const entry = import.meta.resolve('fauxqs');
  const mod = (await import(new URL('./s3/s3Store.js', entry).href)) as { S3Store: S3StoreClass };
  return mod.S3Store;
}

/** File names: the key, URI-encoded (no `/`), so any key maps to one flat file. */
const fileOf = (dir: string, bucket: string, key: string) => join(dir, encodeURIComponent(bucket), encodeURIComponent(key));

function writeDurably(file: string, bytes: Buffer | string): void {
  const temp = `${file}.tmp`;
  const fd = openSync(temp, 'w');
  try {
    writeFileSync(fd, bytes);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temp, file);
}

/** A fauxqs S3 store whose objects are also kept in `dir` (and loaded from it now). */
export async function persistentS3Store(dir: string): Promise<S3StoreLike> {
  const Base = await s3StoreClass();
  class PersistentS3Store extends Base {
    override createBucket(name: string): void {
      super.createBucket(name);
      mkdirSync(join(dir, encodeURIComponent(name)), { recursive: true });
    }
    override putObject(bucket: string, key: string, body: Buffer, contentType?: string, metadata?: Record<string, string>): unknown {
      const stored = super.putObject(bucket, key, body, contentType, metadata);
      const file = fileOf(dir, bucket, key);
      writeDurably(file, body);
      writeDurably(`${file}.meta`, JSON.stringify({ contentType: contentType ?? 'application/octet-stream', metadata: metadata ?? {} }));
      return stored;
    }
    /** A completed multipart upload (an export's file) is kept on disk like a PUT. */
    override completeMultipartUpload(uploadId: string, parts: unknown[]) {
      const bucket = (this as unknown as { multipartUploads: Map<string, { bucket: string }> }).multipartUploads.get(uploadId)?.bucket;
      const obj = super.completeMultipartUpload(uploadId, parts);
      if (bucket !== undefined) {
        const file = fileOf(dir, bucket, obj.key);
        writeDurably(file, obj.body);
        writeDurably(`${file}.meta`, JSON.stringify({ contentType: obj.contentType ?? 'application/octet-stream', metadata: obj.metadata ?? {} }));
      }
      return obj;
    }
    override deleteObject(bucket: string, key: string): void {
      super.deleteObject(bucket, key);
      rmSync(fileOf(dir, bucket, key), { force: true });
      rmSync(`${fileOf(dir, bucket, key)}.meta`, { force: true });
    }
  }
  const store = new PersistentS3Store();
  mkdirSync(dir, { recursive: true });
  for (const bucketDir of readdirSync(dir)) {
    const bucket = decodeURIComponent(bucketDir);
    Base.prototype.createBucket.call(store, bucket);
    for (const name of readdirSync(join(dir, bucketDir))) {
      if (name.endsWith('.meta') || name.endsWith('.tmp')) continue;
      const file = join(dir, bucketDir, name);
      let meta: { contentType?: string; metadata?: Record<string, string> } = {};
      try {
        meta = JSON.parse(readFileSync(`${file}.meta`, 'utf8')) as typeof meta;
      } catch {
        // written before its metadata: the defaults
      }
      Base.prototype.putObject.call(store, bucket, decodeURIComponent(name), readFileSync(file), meta.contentType, meta.metadata);
    }
  }
  return store;
}

// --- signatures: the local store refuses what S3 refuses ----------------------------------------

/** The one key pair of local mode (local/dynamo.ts LOCAL_AWS_ENV): what its processes sign with. */
const LOCAL_KEYS: Record<string, string> = { [LOCAL_AWS_ENV.AWS_ACCESS_KEY_ID]: LOCAL_AWS_ENV.AWS_SECRET_ACCESS_KEY };
/** S3's allowed clock difference of a signed request, and a presigned URL's longest life. */
const MAX_SKEW_MS = 15 * 60_000;
const MAX_EXPIRES_SECONDS = 7 * 24 * 3600;
const PAYLOAD_HEADER = 'x-amz-content-sha256';

/** A request to the store as it came on the wire. */
export interface StoreRequest {
  method: string;
  /** The request target as sent (`/bucket/key?query`), not decoded. */
  url: string;
  headers: Record<string, string | string[] | undefined>;
  body?: Buffer;
}

/** S3's refusal: its status, error code and message. */
export interface Refusal {
  status: number;
  code: 'AccessDenied' | 'SignatureDoesNotMatch' | 'InvalidAccessKeyId' | 'RequestTimeTooSkewed' | 'XAmzContentSHA256Mismatch' | 'AuthorizationQueryParametersError';
  message: string;
}

const refuse = (code: Refusal['code'], message: string, status = 403): Refusal => ({ status, code, message });

/** `20261125T220719Z` → the date, or undefined. */
function amzDate(text: string | undefined): Date | undefined {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(text ?? '');
  return m ? new Date(Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!)) : undefined;
}

/** The query's parameters, decoded, a repeated one as a list (as the signer takes them); undefined when malformed. */
function queryOf(search: string): Record<string, string | string[]> | undefined {
  const query: Record<string, string | string[]> = {};
  try {
    for (const pair of search.split('&')) {
      if (pair === '') continue;
      const at = pair.indexOf('=');
      const key = decodeURIComponent(at < 0 ? pair : pair.slice(0, at));
      const value = at < 0 ? '' : decodeURIComponent(pair.slice(at + 1));
      const seen = query[key];
      query[key] = seen === undefined ? value : [...(Array.isArray(seen) ? seen : [seen]), value];
    }
  } catch {
    return undefined;
  }
  return query;
}

const headerText = (value: string | string[] | undefined): string | undefined => (Array.isArray(value) ? value.join(',') : value);
const single = (value: string | string[] | undefined): string | undefined => (Array.isArray(value) ? undefined : value);

/** `<key>/<yyyymmdd>/<region>/<service>/aws4_request` of a signature, or undefined. */
function scopeOf(credential: string | undefined) {
  const parts = (credential ?? '').split('/');
  if (parts.length !== 5 || parts[4] !== 'aws4_request' || !/^\d{8}$/.test(parts[1]!)) return undefined;
  return { accessKeyId: parts[0]!, day: parts[1]!, region: parts[2]!, service: parts[3]! };
}

function sameSignature(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * Whether the request carries a valid AWS Signature Version 4 of the local key, as S3 checks it:
 * a presigned URL (`X-Amz-Signature` in the query: its signature over method, path, query and
 * signed headers, and its expiry) or an `Authorization` header (its signature, its date within
 * 15 minutes, and a declared payload hash that matches the body). The signature is computed again
 * by the SDK's own signer (@smithy/signature-v4) and compared. Undefined when it does; else S3's
 * refusal (an unsigned request is `AccessDenied`, as S3 answers anonymous access to a private bucket).
 */
export async function checkSignature(req: StoreRequest, now = Date.now()): Promise<Refusal | undefined> {
  const q = req.url.indexOf('?');
  const path = q < 0 ? req.url : req.url.slice(0, q);
  const query = queryOf(q < 0 ? '' : req.url.slice(q + 1));
  if (!query) return refuse('AuthorizationQueryParametersError', 'the query string is malformed', 400);
  const authorization = single(req.headers.authorization);
  const presigned = 'X-Amz-Signature' in query || 'X-Amz-Algorithm' in query;
  if (!presigned && !authorization) return refuse('AccessDenied', 'Access Denied (the request is not signed)');

  const fields = presigned
    ? {
        algorithm: single(query['X-Amz-Algorithm']),
        credential: single(query['X-Amz-Credential']),
        signedHeaders: single(query['X-Amz-SignedHeaders']),
        signature: single(query['X-Amz-Signature']),
        date: single(query['X-Amz-Date']),
      }
    : (() => {
        const m = /^(\S+) Credential=([^,\s]+),\s*SignedHeaders=([^,\s]+),\s*Signature=([0-9a-f]+)$/.exec(authorization!.trim());
        return { algorithm: m?.[1], credential: m?.[2], signedHeaders: m?.[3], signature: m?.[4], date: single(req.headers['x-amz-date']) };
      })();
  if (fields.algorithm !== 'AWS4-HMAC-SHA256' || !fields.signature || !fields.signedHeaders) {
    return refuse('AccessDenied', 'Access Denied (only AWS4-HMAC-SHA256 signatures are accepted)');
  }
  const scope = scopeOf(fields.credential);
  const signingDate = amzDate(fields.date);
  if (!scope || !signingDate || scope.day !== fields.date!.slice(0, 8)) return refuse('AccessDenied', 'Access Denied (malformed credential scope or date)');
  const secretAccessKey = LOCAL_KEYS[scope.accessKeyId];
  if (secretAccessKey === undefined) return refuse('InvalidAccessKeyId', 'The AWS Access Key Id you provided does not exist in our records.');

  const signed = fields.signedHeaders.split(';');
  const headers: Record<string, string> = {};
  for (const name of signed) {
    const value = headerText(req.headers[name]);
    if (value === undefined) return refuse('SignatureDoesNotMatch', `a signed header is missing: ${name}`);
    headers[name] = value;
  }
  const sessionToken = presigned ? single(query['X-Amz-Security-Token']) : single(req.headers['x-amz-security-token']);
  const signer = new SignatureV4({
    credentials: { accessKeyId: scope.accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) },
    region: scope.region,
    service: scope.service,
    sha256: Sha256,
    // S3 signs the path as sent (no second encoding, no normalisation).
    uriEscapePath: false,
  });
  const request = { method: req.method, protocol: 'http:', hostname: 'localhost', path, query, headers };
  const options = { signingDate, signingRegion: scope.region, signingService: scope.service, signableHeaders: new Set(signed) };

  let expected: string | undefined;
  if (presigned) {
    const expires = Number(single(query['X-Amz-Expires']));
    if (!Number.isInteger(expires) || expires < 1 || expires > MAX_EXPIRES_SECONDS) return refuse('AuthorizationQueryParametersError', 'X-Amz-Expires must be 1 to 604800 seconds', 400);
    if (now > signingDate.getTime() + expires * 1000) return refuse('AccessDenied', 'Request has expired');
    if (signingDate.getTime() - now > MAX_SKEW_MS) return refuse('AccessDenied', 'Request is not valid yet');
    const { 'X-Amz-Signature': _signature, ...rest } = query;
    // The payload of a presigned URL is UNSIGNED-PAYLOAD unless it says otherwise; given to the
    // signer as a header it neither signs nor moves into the query (it is in the query already).
    const payload = single(query['X-Amz-Content-Sha256']) ?? 'UNSIGNED-PAYLOAD';
    const hidden = signed.includes(PAYLOAD_HEADER) ? new Set<string>() : new Set([PAYLOAD_HEADER]);
    const out = await signer.presign(
      { ...request, query: rest, headers: signed.includes(PAYLOAD_HEADER) ? headers : { ...headers, [PAYLOAD_HEADER]: payload } },
      { ...options, expiresIn: expires, unsignableHeaders: hidden, unhoistableHeaders: hidden },
    );
    const signature = out.query?.['X-Amz-Signature'];
    expected = typeof signature === 'string' ? signature : undefined;
  } else {
    if (Math.abs(now - signingDate.getTime()) > MAX_SKEW_MS) return refuse('RequestTimeTooSkewed', 'The difference between the request time and the current time is too large.');
    const declared = single(req.headers[PAYLOAD_HEADER]);
    if (declared && /^[0-9a-f]{64}$/.test(declared) && createHash('sha256').update(req.body ?? Buffer.alloc(0)).digest('hex') !== declared) {
      return refuse('XAmzContentSHA256Mismatch', 'The provided x-amz-content-sha256 header does not match what was computed.', 400);
    }
    const out = await signer.sign({ ...request, ...(req.body ? { body: req.body } : {}) }, options);
    expected = /Signature=([0-9a-f]+)/.exec(String(out.headers.authorization ?? out.headers.Authorization))?.[1];
  }
  if (!expected || !sameSignature(expected, fields.signature)) {
    return refuse('SignatureDoesNotMatch', 'The request signature we calculated does not match the signature you provided. Check your key and signing method.');
  }
  return undefined;
}

/** S3's XML error body. */
export const s3ErrorXml = (refusal: Refusal, requestId: string) =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${refusal.code}</Code><Message>${refusal.message.replace(/[<>&]/g, '')}</Message><RequestId>${requestId}</RequestId></Error>`;

interface HookReply {
  code(status: number): HookReply;
  header(name: string, value: string): HookReply;
  send(body?: string): unknown;
}

/** The part of fauxqs's Fastify app the check needs. */
interface HookableApp {
  addHook(
    name: 'preHandler',
    hook: (
      request: { method: string; raw: { url?: string }; headers: StoreRequest['headers']; body?: unknown; routeOptions: { url?: string } },
      reply: HookReply,
    ) => Promise<unknown>,
  ): unknown;
}

/**
 * Makes fauxqs's S3 API refuse what S3 refuses (checkSignature), with S3's XML error; its SQS and
 * SNS endpoint (`POST /`) and `GET /health` are left as they are. Runs before every handler, after
 * the body is read (a header-signed request's payload hash is checked against it).
 */
export function requireSignedS3(app: HookableApp): void {
  app.addHook('preHandler', async (request, reply) => {
    const route = request.routeOptions.url;
    // SQS's API (POST /), the health check and fauxqs's read-only queue inspection (`npm run status`) are not S3.
    if ((route === '/' && request.method === 'POST') || route === '/health' || (request.method === 'GET' && route?.startsWith('/_fauxqs/queues'))) return undefined;
    const refusal = await checkSignature({ method: request.method, url: request.raw.url ?? '/', headers: request.headers, body: Buffer.isBuffer(request.body) ? request.body : undefined });
    if (!refusal) return undefined;
    const requestId = randomUUID().replaceAll('-', '').toUpperCase().slice(0, 16);
    const answer = reply.code(refusal.status).header('x-amz-request-id', requestId);
    if (request.method === 'HEAD') return answer.send();
    return answer.header('content-type', 'application/xml').send(s3ErrorXml(refusal, requestId));
  });
}
