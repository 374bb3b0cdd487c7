import { apiShape } from '../schemas/resource.js';
import { randomUUID } from 'node:crypto';
import { allowInsecureWebhooks } from '../config/env.js';
import {
  deleteEndpointItem,
  type EndpointItem,
  getEndpointItem,
  insertEndpoint,
  listEndpointItems,
  MAX_ENDPOINTS_PER_ACCOUNT,
  updateEndpointItem,
} from '../db/webhooks.js';
import type { OperationContext } from '../domain/context.js';
import { ApiError, notFound } from '../errors.js';
import type { ResultSeal } from '../http/idempotency.js';
import { parseWebhookUrl } from '../net/ssrf.js';
import {

  type WebhookCreateInput,
  type WebhookEndpoint,
  type WebhookEvent,
  type WebhookRotateInput,
  type WebhookUpdateInput,
  webhookEndpointSchema,
} from '../schemas/webhooks.js';
import { newSigningSecret, secretBox, secretPrefix } from './secrets.js';
import { urlAddressRefusal } from './ssrf.js';
import { windowsAfter, windowsOf } from './subscriptions.js';

/**
 * Webhook endpoints (items and keys: shared/db/webhooks.ts). The stored item holds the API
 * fields plus `secret_enc` (the signing secret encrypted by the SecretBox) and, during a
 * rotation's grace period, the previous secret; neither ever leaves this module's callers.
 */
export type StoredEndpoint = EndpointItem;

const endpointShape = apiShape(webhookEndpointSchema);

/** The API shape: stored fields, with `disabled_reason` and `failing_since` filled in for older items. */
export function endpointToApi(item: EndpointItem): WebhookEndpoint {
  return endpointShape({ ...item, disabled_reason: item.disabled_reason ?? (item.is_active ? '' : 'manual'), failing_since: item.failing_since ?? null });
}

/** The address check (the last check of contract §6, it may resolve DNS). */
async function checkAddress(url: string): Promise<void> {
  const allowInsecure = allowInsecureWebhooks();
  const parsed = parseWebhookUrl(url, allowInsecure);
  const refusal = parsed ? await urlAddressRefusal(parsed, allowInsecure) : 'url is not allowed';
  if (refusal) throw new ApiError('webhooks.invalid_url', `url is not allowed: ${refusal}`, [{ path: 'url', message: refusal }]);
}

export const getStoredEndpoint = getEndpointItem;
export const listStoredEndpoints = listEndpointItems;

async function requireEndpoint(accountId: string, id: string): Promise<EndpointItem> {
  const item = await getEndpointItem(accountId, id);
  if (!item) throw notFound('webhooks', 'webhook endpoint');
  return item;
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

export async function createEndpoint(ctx: OperationContext, input: WebhookCreateInput): Promise<CreateResult> {
  await checkAddress(input.url);
  const id = randomUUID();
  const now = new Date().toISOString();
  const secret = newSigningSecret();
  const item: EndpointItem = {
    id,
    account_id: ctx.accountId,
    created_by: ctx.userId,
    url: input.url,
    description: input.description ?? '',
    secret_prefix: secretPrefix(secret),
    events: input.events as WebhookEvent[],
    is_active: true,
    disabled_reason: '',
    created_at: now,
    updated_at: now,
    subscriptions: [{ events: input.events, from: now }],
    secret_enc: await secretBox().encrypt(secret, { accountId: ctx.accountId, endpointId: id }),
  };
  if (!(await insertEndpoint(item))) {
    throw new ApiError('webhooks.limit_exceeded', `an account has at most ${MAX_ENDPOINTS_PER_ACCOUNT} webhook endpoints`);
  }
  return { endpoint: endpointToApi(item), signing_secret: secret };
}

export async function getEndpoint(ctx: OperationContext, id: string): Promise<WebhookEndpoint> {
  return endpointToApi(await requireEndpoint(ctx.accountId, id));
}

export async function listEndpoints(ctx: OperationContext): Promise<{ items: WebhookEndpoint[] }> {
  return { items: (await listEndpointItems(ctx.accountId)).map(endpointToApi) };
}

/**
 * Partial update: only fields that change are written (concurrent updates of different fields
 * both survive). `is_active: true` clears `disabled_reason` and `failing_since`; `false` sets
 * `disabled_reason` "manual".
 */
export async function updateEndpoint(ctx: OperationContext, input: WebhookUpdateInput): Promise<WebhookEndpoint> {
  // A concurrent change of the subscription (events, is_active) refuses this one's condition: read and decide again.
  for (let attempt = 0; ; attempt++) {
    const updated = await updateEndpointOnce(ctx, input);
    if (updated) return updated;
    if (attempt >= 4) throw new ApiError('webhooks.conflict', 'the endpoint was changed concurrently; try again');
  }
}

async function updateEndpointOnce(ctx: OperationContext, input: WebhookUpdateInput): Promise<WebhookEndpoint | undefined> {
  const current = await requireEndpoint(ctx.accountId, input.id);
  const api = endpointToApi(current);
  const wanted: Record<string, unknown> = {};
  if (input.url !== undefined) wanted.url = input.url;
  if (input.description !== undefined) wanted.description = input.description;
  if (input.events !== undefined) wanted.events = input.events;
  if (input.is_active !== undefined) {
    wanted.is_active = input.is_active;
    wanted.disabled_reason = input.is_active ? '' : 'manual';
  }
  const clearFailing = input.is_active === true && current.failing_since != null;
  const set = Object.fromEntries(Object.entries(wanted).filter(([k, value]) => JSON.stringify(api[k as keyof WebhookEndpoint]) !== JSON.stringify(value)));
  if (Object.keys(set).length === 0 && !clearFailing) return api;
  if (typeof set.url === 'string') await checkAddress(set.url);
  const at = new Date().toISOString();
  // What it subscribes to changes from now on (contract §6: events are matched by their own time).
  const resubscribed = 'events' in set || 'is_active' in set;
  const windows = resubscribed ? windowsAfter(windowsOf(current), { active: (set.is_active as boolean | undefined) ?? current.is_active, events: (set.events as string[] | undefined) ?? current.events }, at) : undefined;
  const updated = await updateEndpointItem(ctx.accountId, input.id, {
    set: { ...set, updated_at: at, ...(windows ? { subscriptions: windows } : {}) },
    remove: input.is_active === true ? ['failing_since'] : [],
    ...(windows ? { condition: subscriptionsAsRead(current) } : {}),
  });
  if (updated) return endpointToApi(updated);
  if (!(await getEndpointItem(ctx.accountId, input.id))) throw notFound('webhooks', 'webhook endpoint');
  return undefined;
}

/** The condition that the endpoint's subscription is still as read (its windows, and whether it is active). */
function subscriptionsAsRead(current: EndpointItem) {
  const active = { expression: '#cact = :cact', names: { '#cact': 'is_active' }, values: { ':cact': current.is_active } as Record<string, unknown> };
  if (!current.subscriptions) return { ...active, expression: `${active.expression} AND attribute_not_exists(#csub)`, names: { ...active.names, '#csub': 'subscriptions' } };
  return { expression: `${active.expression} AND #csub = :csub`, names: { ...active.names, '#csub': 'subscriptions' }, values: { ...active.values, ':csub': current.subscriptions } };
}

/** Deletes the endpoint; its pending deliveries end `failed` when the worker next sees them. */
export async function deleteEndpoint(ctx: OperationContext, id: string): Promise<{ deleted: true }> {
  if (!(await deleteEndpointItem(ctx.accountId, id))) throw notFound('webhooks', 'webhook endpoint');
  return { deleted: true };
}

/**
 * webhooks-rotate-secret: a new secret, returned only here. The current one becomes the
 * previous secret until the grace period ends (0: dropped at once); deliveries are signed with
 * both meanwhile. A secret older than the previous one is dropped.
 */
export async function rotateSecret(ctx: OperationContext, input: WebhookRotateInput): Promise<CreateResult> {
  const current = await requireEndpoint(ctx.accountId, input.id);
  const secret = newSigningSecret();
  const now = Date.now();
  const grace = input.grace_period_seconds;
  const updated = await updateEndpointItem(ctx.accountId, input.id, {
    set: {
      secret_enc: await secretBox().encrypt(secret, { accountId: ctx.accountId, endpointId: input.id }),
      secret_prefix: secretPrefix(secret),
      updated_at: new Date(now).toISOString(),
      ...(grace > 0 ? { previous_secret_enc: current.secret_enc, previous_secret_until: now + grace * 1000 } : {}),
    },
    remove: grace > 0 ? [] : ['previous_secret_enc', 'previous_secret_until'],
    // Two rotations at once: the second must not keep a secret that nobody was shown.
    condition: { expression: '#cse = :cse', names: { '#cse': 'secret_enc' }, values: { ':cse': current.secret_enc } },
  });
  if (!updated) {
    if (!(await getEndpointItem(ctx.accountId, input.id))) throw notFound('webhooks', 'webhook endpoint');
    throw new ApiError('webhooks.conflict', 'the secret was rotated concurrently; try again');
  }
  return { endpoint: endpointToApi(updated), signing_secret: secret };
}

/** The endpoint's health after an attempt (not for webhooks-test deliveries). */
export type HealthVerdict = 'ok' | 'failing' | 'disabled';

/** A 2xx: `failing_since` is cleared (one write only when it was set). */
export async function noteSuccess(endpoint: EndpointItem): Promise<void> {
  if (endpoint.failing_since == null) return;
  await updateEndpointItem(endpoint.account_id, endpoint.id, { remove: ['failing_since'] });
}

/**
 * A failed attempt: `failing_since` is set on the first failure since the last success; an
 * endpoint failing for `disableAfterMs` is disabled (`failing`). Returns what it did.
 */
export async function noteFailure(endpoint: EndpointItem, at: Date, disableAfterMs: number): Promise<HealthVerdict> {
  if (endpoint.failing_since == null) {
    await updateEndpointItem(endpoint.account_id, endpoint.id, {
      set: { failing_since: at.toISOString() },
      condition: { expression: 'attribute_not_exists(#cfs)', names: { '#cfs': 'failing_since' } },
    });
    if (disableAfterMs > 0) return 'failing';
  } else if (at.getTime() - Date.parse(endpoint.failing_since) < disableAfterMs) {
    return 'failing';
  }
  return (await disableEndpoint(endpoint, 'failing', at)) ? 'disabled' : 'failing';
}

/** Disables an active endpoint with a reason (`gone`, `failing`). False when it was not active. */
export async function disableEndpoint(endpoint: EndpointItem, reason: 'gone' | 'failing', at: Date): Promise<boolean> {
  // Its open subscription window closes now (events raised from now on are not its own).
  for (let attempt = 0; attempt < 5; attempt++) {
    const current = attempt === 0 ? endpoint : await getEndpointItem(endpoint.account_id, endpoint.id);
    if (!current?.is_active) return false;
    const windows = windowsAfter(windowsOf(current), { active: false, events: current.events }, at.toISOString());
    const updated = await updateEndpointItem(endpoint.account_id, endpoint.id, {
      set: { is_active: false, disabled_reason: reason, updated_at: at.toISOString(), subscriptions: windows },
      condition: subscriptionsAsRead(current),
    });
    if (updated) return true;
  }
  return false;
}
