/**
 * Builds the OpenAPI 3.1 document from the operation registry and the valibot schemas the
 * handlers validate with (operations.ts). Nothing in the document is written by hand: bodies,
 * results, envelopes and webhook payloads are valibot schemas converted by
 * @valibot/to-json-schema (JSON Schema 2020-12, the dialect of OpenAPI 3.1), error codes come
 * from errors.ts and their statuses from statusForCode.
 */
import { readFileSync } from 'node:fs';
import { type ConversionConfig, type JsonSchema, toJsonSchema, toJsonSchemaDefs } from '@valibot/to-json-schema';
import * as v from 'valibot';
import type { OperationEntry } from '../http/registry.js';
import { MAX_BODY_BYTES } from '../http/operation.js';
import { IDEMPOTENCY_HEADER, IDEMPOTENCY_KEY_MAX_LENGTH, IDEMPOTENCY_TTL_SECONDS } from '../http/idempotency.js';
import { codesByStatus, errorCodesFor, verbOf } from './errors.js';
import { ENTITIES } from '../schemas/entities/index.js';
import { requiredScope } from '../auth/scopes.js';
import { ALL_SCOPES, SCOPE_FAMILIES } from '../schemas/api-keys.js';
import { componentSchemas, type OperationDoc, operationDocs } from './operations.js';
import { webhookEvents } from './webhooks.js';

export type OpenApiDocument = Record<string, unknown> & {
  openapi: string;
  paths: Record<string, { post: Record<string, unknown> }>;
  components: { schemas: Record<string, JsonSchema> } & Record<string, unknown>;
  webhooks: Record<string, unknown>;
};

const REF_PREFIX = '#/components/schemas/';

/** The error object of every failure (contract §1). */
export const errorDetailSchema = v.strictObject({
  path: v.pipe(v.string(), v.metadata({ description: 'The body field at fault (dotted path), or "" for the body', examples: ['email'] })),
  message: v.pipe(v.string(), v.metadata({ description: 'What is wrong with it', examples: ['must be empty or a valid email address'] })),
});
export const errorSchema = v.strictObject({
  code: v.pipe(v.string(), v.metadata({ description: 'The contract code `<family>.<name>`; the HTTP status follows from it', examples: ['contacts.invalid_request'] })),
  message: v.pipe(v.string(), v.metadata({ description: 'For humans; never a stack trace or internal data', examples: ['request body is invalid'] })),
  details: v.optional(v.pipe(v.array(errorDetailSchema), v.metadata({ description: 'For validation failures: one entry per field at fault' }))),
  /** API Gateway's request id (also in the logs): quote it when reporting a problem. */
  request_id: v.optional(v.pipe(v.string(), v.metadata({ description: 'The request id, also on every log line of the request: quote it when reporting a problem', examples: ['c1b2a3d4-0000-4000-8000-000000000000'] }))),
});
export const errorEnvelope = (codes: readonly string[]) =>
  v.strictObject({ ok: v.literal(false), error: v.strictObject({ ...errorSchema.entries, code: v.picklist(codes) }) });
/** API Gateway's own throttling answer (it comes before any function runs). */
const gatewayThrottled = v.strictObject({ message: v.pipe(v.string(), v.metadata({ description: "API Gateway's message", examples: ['Too Many Requests'] })) });
export const successEnvelope = (result: v.GenericSchema) => v.strictObject({ ok: v.literal(true), result });

const allDefinitions = (): Record<string, v.GenericSchema> => ({
  ...componentSchemas,
  ErrorDetail: errorDetailSchema,
  ...Object.fromEntries(webhookEvents().map((e) => [e.component, e.payload])),
});

function conversion(definitions: Record<string, v.GenericSchema>): ConversionConfig {
  return {
    target: 'draft-2020-12',
    typeMode: 'input',
    errorMode: 'throw',
    // Trimming and lower-casing keep the type; `check` rules (email, URL syntax) have no JSON
    // Schema equivalent and are described by the error codes instead.
    ignoreActions: ['trim', 'to_lower_case', 'check'],
    definitions,
    overrideRef: ({ referenceId }) => `${REF_PREFIX}${referenceId}`,
  };
}

/** One schema, referring to the components by `$ref` (no embedded `$defs` or `$schema`). */
function convert(schema: v.GenericSchema, config: ConversionConfig): JsonSchema {
  const { $schema: _s, $defs: _d, ...rest } = toJsonSchema(schema, config);
  return rest;
}

const isPaginated = (doc: Pick<OperationDoc, 'result'>): boolean =>
  'entries' in doc.result && typeof doc.result.entries === 'object' && doc.result.entries !== null && 'next_cursor' in doc.result.entries;

/** A registry entry without an OperationDoc still gets a path, flagged `x-undocumented`. */
const undocumented = (entry: OperationEntry): OperationDoc => ({
  summary: `${entry.name} (no description yet)`,
  input: v.record(v.string(), v.unknown()),
  result: v.unknown(),
});

function readVersion(): string {
  try {
    return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: string }).version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
}

/** The operation's description: its own text, then how it is called and what it can answer. */
function describe(entry: OperationEntry, doc: OperationDoc, codes: readonly string[]): string {
  return [
    doc.description ?? `${doc.summary}.`,
    `Called as \`POST /api/${entry.name}\` with a JSON object body and \`Authorization: Bearer <token>\`; answers \`{ "ok": true, "result": … }\`.`,
    `Needs the scope \`${requiredScope(entry)}\` (or one that includes it: see "Keys and scopes").`,
    `Error codes: ${codes.map((c) => `\`${c}\``).join(', ')}.`,
  ].join('\n\n');
}

/** What each tag (family) is, for the reference page. */
const TAG_DESCRIPTIONS: Record<string, string> = {
  ...Object.fromEntries(ENTITIES.map((e) => [e.family, e.description])),
  custom_fields: 'Custom-field definitions of contacts, companies and projects. Record values are keyed by definition id.',
  webhooks: 'Webhook endpoints, their deliveries, and the events they receive (signed per Standard Webhooks).',
  imports: 'CSV imports of contacts and companies, run as jobs with progress and row errors.',
  inbound_emails: "Mail sent or copied to the account's inbound address, logged on the matching contacts.",
  exports: 'CSV exports of contacts, companies, projects and activities (any list and its filters), run as jobs; the file re-imports unchanged.',
  api_keys: 'API keys: bearer tokens with scopes, an expiry and revocation (they need `api_keys:manage`).',
};

const scopeDescription = (scope: string): string => {
  if (scope === '*') return 'Every operation but key management';
  if (scope === '*:read') return 'Every read operation';
  if (scope === 'api_keys:manage') return 'The api-keys-* operations';
  const [family, access] = scope.split(':');
  return access === 'write' ? `Every ${family} operation (write includes read)` : `The ${family} read operations`;
};

/** The `RateLimit-*` headers every answer carries while rate limiting is on (contract §14). */
const RATE_LIMIT_HEADERS = {
  'RateLimit-Limit': { description: "The account's bucket size (burst): requests allowed at once after a quiet period.", schema: { type: 'integer', minimum: 1 } },
  'RateLimit-Remaining': { description: 'Requests the account can make right now, after this one.', schema: { type: 'integer', minimum: 0 } },
  'RateLimit-Reset': { description: 'Seconds until the bucket is full again.', schema: { type: 'integer', minimum: 0 } },
};
const RETRY_AFTER = { 'Retry-After': { description: 'Seconds until one request is allowed again.', schema: { type: 'integer', minimum: 1 } } };

function operationObject(entry: OperationEntry, doc: OperationDoc, documented: boolean, config: ConversionConfig) {
  const codes = errorCodesFor(entry, { paginated: isPaginated(doc), extra: doc.errors });
  const responses: Record<string, unknown> = {
    200: { description: 'Success', headers: RATE_LIMIT_HEADERS, content: { 'application/json': { schema: convert(successEnvelope(doc.result), config) } } },
  };
  for (const [status, statusCodes] of codesByStatus(codes)) {
    const envelope = errorEnvelope(statusCodes);
    responses[status] = {
      description:
        status === 429
          ? "Error: api.rate_limited — the account is over its rate limit (contract §14): retry after `Retry-After` seconds. Deployed, API Gateway's stage-wide throttle (the outer guard) may also answer 429, with its own body `{ \"message\": \"Too Many Requests\" }` and no headers."
          : `Error: ${statusCodes.join(', ')}`,
      // An unauthenticated answer (401) belongs to no account: it carries no RateLimit headers.
      ...(status === 401 ? {} : { headers: status === 429 ? { ...RATE_LIMIT_HEADERS, ...RETRY_AFTER } : RATE_LIMIT_HEADERS }),
      content: { 'application/json': { schema: convert(status === 429 ? v.union([envelope, gatewayThrottled]) : envelope, config) } },
    };
  }
  // The header of the operations declared idempotent (not api-keys-create, which ignores it).
  const idempotent = entry.idempotent === true;
  const input = convert(doc.input, config);
  // A body with no required field may be empty (an empty body counts as `{}`).
  const bodyRequired = Array.isArray((input as { required?: unknown[] }).required) && (input as { required: unknown[] }).required.length > 0;
  return {
    operationId: entry.name,
    summary: doc.summary,
    description: describe(entry, doc, codes),
    tags: [entry.family],
    // The scope rides in an extension: OpenAPI 3.1 allows role names in a bearer requirement, but
    // linters (Spectral's oas3-operation-security-defined) accept scopes only from OAuth flows.
    security: [{ bearerAuth: [] }],
    'x-required-scope': requiredScope(entry),
    ...(idempotent
      ? {
          parameters: [
            {
              name: IDEMPOTENCY_HEADER,
              in: 'header',
              required: false,
              description: `Makes a retried ${verbOf(entry.name) === 'upsert' ? 'upsert' : 'create'} safe: within ${IDEMPOTENCY_TTL_SECONDS / 3600} h, a request with the same key and body returns the first result and creates nothing; the same key with another body is \`${entry.family}.conflict\` (409). Scoped to the account and the operation.`,
              schema: { type: 'string', minLength: 1, maxLength: IDEMPOTENCY_KEY_MAX_LENGTH, pattern: '^[\\x21-\\x7E]+$' },
            },
          ],
        }
      : {}),
    requestBody: { required: bodyRequired, content: { 'application/json': { schema: input } } },
    responses,
    'x-error-codes': codes,
    ...(documented ? {} : { 'x-undocumented': true }),
  };
}

function webhooksSection(config: ConversionConfig) {
  const header = (name: string, description: string, schema: Record<string, unknown>) => ({ name, in: 'header', required: true, description, schema });
  const parameters = [
    header('webhook-id', 'The delivery id; the same on every retry of one delivery (use it to drop duplicates).', { type: 'string' }),
    header('webhook-timestamp', 'Unix seconds of this attempt.', { type: 'string', pattern: '^[0-9]+$' }),
    header(
      'webhook-signature',
      '`v1,` + base64(HMAC-SHA256(key = base64-decoded signing secret after `whsec_`, message = `{webhook-id}.{webhook-timestamp}.{raw body}`)), per the Standard Webhooks specification. Verify it with any Standard Webhooks library (the client exports `verifyWebhook`).',
      { type: 'string', pattern: '^v1,' },
    ),
  ];
  return Object.fromEntries(
    webhookEvents().map((e) => [
      e.event,
      {
        post: {
          operationId: `webhook-${e.event.replace('.', '-')}`,
          summary: e.summary,
          tags: ['webhooks'],
          parameters,
          requestBody: { required: true, content: { 'application/json': { schema: convert(e.payload, config) } } },
          responses: {
            '2XX': { description: 'Any 2xx answer within 10 s marks the delivery delivered; anything else is retried.' },
          },
        },
      },
    ]),
  );
}

/** The document of the given registry (functions/operations.ts passes its entries; shared/ never imports functions/). */
export function buildOpenApiDocument(operations: readonly OperationEntry[], opts: { serverUrl?: string } = {}): OpenApiDocument {
  const definitions = allDefinitions();
  const config = conversion(definitions);
  const docs: Partial<Record<string, OperationDoc>> = operationDocs;
  const paths: OpenApiDocument['paths'] = {};
  for (const entry of operations) {
    const doc = docs[entry.name];
    paths[`/api/${entry.name}`] = { post: operationObject(entry, doc ?? undocumented(entry), doc !== undefined, config) };
  }
  const { definitions: _d, ...defsConfig } = config;
  const schemas = Object.fromEntries(
    Object.entries(toJsonSchemaDefs(definitions, defsConfig)).map(([name, { $schema: _s, ...schema }]) => [name, schema as JsonSchema]),
  );
  return {
    openapi: '3.1.0',
    info: {
      title: 'CRM API',
      version: readVersion(),
      contact: { name: 'CRM service maintainers' },
      license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
      description: [
        'Every operation is `POST /api/<operation>` with a JSON object body (an empty body counts as `{}`) and `Authorization: Bearer <token>`.',
        'Success is HTTP 200 `{ "ok": true, "result": ... }`; failure is `{ "ok": false, "error": { "code", "message", "details"?, "request_id" } }` with the status given by the code.',
        `Bodies larger than ${MAX_BODY_BYTES / 1024} KiB are rejected with \`api.payload_too_large\` (413).`,
        'List operations are paginated with `cursor` / `next_cursor` (empty on the last page), newest first.',
        'Rate limits: each account has a token bucket (`CRM_RATE_LIMIT`, default 100 requests per second with bursts of 200) shared by all its keys. Every answer carries `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset` (seconds); over the limit, 429 `api.rate_limited` with `Retry-After` (seconds).',
      ].join('\n\n'),
    },
    servers: [{ url: opts.serverUrl ?? 'http://127.0.0.1:3000', description: opts.serverUrl ? 'this server' : 'local mode (npm start)' }],
    security: [{ bearerAuth: [] }],
    tags: [...new Set<string>([...operations.map((o) => o.family), 'webhooks'])].map((name) => ({ name, description: TAG_DESCRIPTIONS[name] ?? `${name} operations` })),
    paths,
    webhooks: webhooksSection(config),
    components: {
      schemas,
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          description: [
            'An API key of one account and user: `crm_` + 43 base64url characters (`api-keys-create`, `npm run token`, or the token printed by `npm start`).',
            "Each operation's `security` names the scope it needs. Scopes: `<family>:read` and `<family>:write` for each family (" + SCOPE_FAMILIES.join(', ') + '); `write` includes `read` of the same family; `*:read` every read; `*` everything but key management; `api_keys:manage` the `api-keys-*` operations.',
            'A call outside the key\'s scopes is 403 `auth.forbidden` naming the missing scope.',
          ].join(' '),
          'x-scopes': Object.fromEntries(ALL_SCOPES.map((scope) => [scope, scopeDescription(scope)])),
        },
      },
    },
  };
}
