import { randomUUID } from 'node:crypto';
import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '../db/client.js';
import { isConditionFailure, newestFirst, queryPartition } from '../db/records.js';
import { keys } from '../db/table.js';
import { ApiError, notFound } from '../errors.js';
import type { ResultSeal } from '../http/idempotency.js';
import type { OperationContext } from '../domain/context.js';
import {
  WEBHOOK_ENDPOINT_FIELDS,
  type WebhookCreateInput,
  type WebhookEndpoint,
  type WebhookEvent,
  type WebhookUpdateInput,
} from '../schemas/webhooks.js';
import { allowInsecureWebhooks } from './config.js';
import { newSigningSecret, secretBox, secretPrefix } from './secrets.js';
import { parseWebhookUrl, urlAddressRefusal } from './ssrf.js';

/**
 * Webhook endpoints: items `{ pk: A#<account>#wh, sk: <id> }`, so the stream consumer reads an
 * account's endpoints with one query. The item holds the API fields plus `secret_enc` (the
 * signing secret encrypted by the SecretBox), which never leaves this module's callers.
 */
export interface StoredEndpoint extends WebhookEndpoint {
  secret_enc: string;
}

export const endpointToApi = (item: object): WebhookEndpoint =>
  Object.fromEntries(WEBHOOK_ENDPOINT_FIELDS.map((k) => [k, (item as Record<string, unknown>)[k]])) as unknown as WebhookEndpoint;

/** The address check (the last check of contract §6, it may resolve DNS). */
async function checkAddress(url: string): Promise<void> {
  const allowInsecure = allowInsecureWebhooks();
  const parsed = parseWebhookUrl(url, allowInsecure);
  const refusal = parsed ? await urlAddressRefusal(parsed, allowInsecure) : 'url is not allowed';
  if (refusal) throw new ApiError('webhooks.invalid_url', `url is not allowed: ${refusal}`, [{ path: 'url', message: refusal }]);
}

export async function getStoredEndpoint(accountId: string, id: string): Promise<StoredEndpoint | undefined> {
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: keys.webhookEndpoint(accountId, id), ConsistentRead: true }));
  return out.Item as StoredEndpoint | undefined;
}

/** Every endpoint of an account, newest first (one query on the account's endpoint partition). */
export async function listStoredEndpoints(accountId: string): Promise<StoredEndpoint[]> {
  return (await queryPartition<StoredEndpoint>(keys.webhookEndpointPartition(accountId))).sort(newestFirst);
}

type CreateResult = { endpoint: WebhookEndpoint; signing_secret: string };

/**
 * How an idempotent webhooks-create result is stored: the signing secret encrypted with the
 * secret box (bound to account and endpoint), never in plain text.
 */
export const sealedCreateResult: ResultSeal<CreateResult> = {
  seal: async (result, ctx) => ({
    endpoint: result.endpoint,
    signing_secret_enc: await secretBox().encrypt(result.signing_secret, { accountId: ctx.accountId, endpointId: result.endpoint.id }),
  }),
  open: async (stored, ctx) => {
    const s = stored as { endpoint: WebhookEndpoint; signing_secret_enc: string };
    return { endpoint: s.endpoint, signing_secret: await secretBox().decrypt(s.signing_secret_enc, { accountId: ctx.accountId, endpointId: s.endpoint.id }) };
  },
};

export async function createEndpoint(ctx: OperationContext, input: WebhookCreateInput): Promise<{ endpoint: WebhookEndpoint; signing_secret: string }> {
  await checkAddress(input.url);
  const id = randomUUID();
  const now = new Date().toISOString();
  const secret = newSigningSecret();
  const endpoint: WebhookEndpoint = {
    id,
    account_id: ctx.accountId,
    created_by: ctx.userId,
    url: input.url,
    description: input.description ?? '',
    secret_prefix: secretPrefix(secret),
    events: input.events as WebhookEvent[],
    is_active: true,
    created_at: now,
    updated_at: now,
  };
  const secretEnc = await secretBox().encrypt(secret, { accountId: ctx.accountId, endpointId: id });
  await db().send(
    new PutCommand({
      TableName: tableName(),
      Item: { ...keys.webhookEndpoint(ctx.accountId, id), ...endpoint, secret_enc: secretEnc },
      ConditionExpression: 'attribute_not_exists(pk)',
    }),
  );
  return { endpoint, signing_secret: secret };
}

export async function getEndpoint(ctx: OperationContext, id: string): Promise<WebhookEndpoint> {
  const item = await getStoredEndpoint(ctx.accountId, id);
  if (!item) throw notFound('webhooks', 'webhook endpoint');
  return endpointToApi(item);
}

export async function listEndpoints(ctx: OperationContext): Promise<{ items: WebhookEndpoint[] }> {
  return { items: (await listStoredEndpoints(ctx.accountId)).map(endpointToApi) };
}


/** Partial update: only fields that change are written (concurrent updates of different fields both survive). */
export async function updateEndpoint(ctx: OperationContext, input: WebhookUpdateInput): Promise<WebhookEndpoint> {
  const current = await getStoredEndpoint(ctx.accountId, input.id);
  if (!current) throw notFound('webhooks', 'webhook endpoint');
  const wanted: Partial<WebhookEndpoint> = {};
  if (input.url !== undefined) wanted.url = input.url;
  if (input.description !== undefined) wanted.description = input.description;
  if (input.events !== undefined) wanted.events = input.events as WebhookEvent[];
  if (input.is_active !== undefined) wanted.is_active = input.is_active;
  const changed = Object.entries(wanted).filter(([k, value]) => JSON.stringify(current[k as keyof WebhookEndpoint]) !== JSON.stringify(value));
  if (changed.length === 0) return endpointToApi(current);
  if (wanted.url !== undefined && wanted.url !== current.url) await checkAddress(wanted.url);
  const now = new Date().toISOString();
  const names: Record<string, string> = { '#upd': 'updated_at' };
  const values: Record<string, unknown> = { ':upd': now };
  const sets = ['#upd = :upd'];
  changed.forEach(([k, value], i) => {
    names[`#f${i}`] = k;
    values[`:f${i}`] = value;
    sets.push(`#f${i} = :f${i}`);
  });
  try {
    const out = await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.webhookEndpoint(ctx.accountId, input.id),
        UpdateExpression: `SET ${sets.join(', ')}`,
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
        ReturnValues: 'ALL_NEW',
      }),
    );
    return endpointToApi(out.Attributes ?? {});
  } catch (error) {
    if (isConditionFailure(error)) throw notFound('webhooks', 'webhook endpoint');
    throw error;
  }
}

/** Deletes the endpoint; its pending deliveries end `failed` when the worker next sees them. */
export async function deleteEndpoint(ctx: OperationContext, id: string): Promise<{ deleted: true }> {
  try {
    await db().send(new DeleteCommand({ TableName: tableName(), Key: keys.webhookEndpoint(ctx.accountId, id), ConditionExpression: 'attribute_exists(pk)' }));
  } catch (error) {
    if (isConditionFailure(error)) throw notFound('webhooks', 'webhook endpoint');
    throw error;
  }
  return { deleted: true };
}
