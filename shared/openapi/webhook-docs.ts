/**
 * The API description of the webhook operations (see operations.ts for the shape of an entry).
 */
import {
  webhookCreateInput,
  webhookCreateResult,
  webhookDeleteResult,
  webhookDeliveriesInput,
  webhookDeliveriesResult,
  webhookDeliverySchema,
  webhookEndpointSchema,
  webhookIdInput,
  webhookListInput,
  webhookListResult,
  webhookRecoverInput,
  webhookRecoverResult,
  webhookResendInput,
  webhookRotateInput,
  webhookRotateResult,
  webhookUpdateInput,
} from '../schemas/webhooks.js';
import type * as v from 'valibot';
import type { OperationDoc } from './doc-types.js';

/** Named component schemas of the webhook operations. */
export const webhookComponentSchemas: Record<string, v.GenericSchema> = {
  WebhookEndpoint: webhookEndpointSchema,
  WebhookDelivery: webhookDeliverySchema,
  WebhookCreateResult: webhookCreateResult,
  WebhookList: webhookListResult,
  WebhookDeliveries: webhookDeliveriesResult,
  WebhookDeleted: webhookDeleteResult,
  WebhookIdInput: webhookIdInput,
  WebhookListInput: webhookListInput,
  WebhookCreateInput: webhookCreateInput,
  WebhookUpdateInput: webhookUpdateInput,
  WebhookDeliveriesInput: webhookDeliveriesInput,
  WebhookRotateInput: webhookRotateInput,
  WebhookResendInput: webhookResendInput,
  WebhookRecoverInput: webhookRecoverInput,
  WebhookRecovered: webhookRecoverResult,
};

const WEBHOOK_BODY_ERRORS = ['webhooks.url_required', 'webhooks.invalid_url', 'webhooks.events_required', 'webhooks.invalid_events'] as const;
const BY_ID_ERRORS = ['webhooks.invalid_id', 'webhooks.not_found'] as const;

export const webhookOperationDocs = {
  'webhooks-create': {
    summary: 'Register a webhook endpoint',
    description: 'Returns the endpoint and its signing secret (`whsec_…`); the secret is shown only here. Deliveries are signed per Standard Webhooks (see `webhooks`).',
    input: webhookCreateInput,
    result: webhookCreateResult,
    errors: [...WEBHOOK_BODY_ERRORS, 'webhooks.limit_exceeded'],
  },
  'webhooks-list': { summary: 'List webhook endpoints, newest first', input: webhookListInput, result: webhookListResult },
  'webhooks-get': { summary: 'Get a webhook endpoint', input: webhookIdInput, result: webhookEndpointSchema },
  'webhooks-update': { summary: 'Update a webhook endpoint (url, description, events, is_active)', input: webhookUpdateInput, result: webhookEndpointSchema, errors: WEBHOOK_BODY_ERRORS },
  'webhooks-delete': { summary: 'Delete a webhook endpoint (nothing more is sent to it)', input: webhookIdInput, result: webhookDeleteResult },
  'webhooks-deliveries': {
    summary: 'Delivery records of an endpoint, newest first (paginated; optional status filter)',
    input: webhookDeliveriesInput,
    result: webhookDeliveriesResult,
    errors: [...BY_ID_ERRORS, 'webhooks.invalid_cursor'],
  },
  'webhooks-rotate-secret': {
    summary: 'Rotate the signing secret of an endpoint',
    description:
      'Returns the endpoint and its new signing secret (shown only here). Until `grace_period_seconds` (0–604800, default 86400) have passed, every delivery carries two `v1,` signatures in `webhook-signature`, new secret first, so receivers can switch without losing a delivery. The old secret is never returned.',
    input: webhookRotateInput,
    result: webhookRotateResult,
    errors: [...BY_ID_ERRORS, 'webhooks.conflict'],
  },
  'webhooks-test': {
    summary: 'Send a test delivery to an endpoint',
    description: 'Sends at once one delivery of event `webhook.test` with data `{ "endpoint_id": … }`, signed and recorded like any other, also to an inactive endpoint. Returns the delivery record.',
    input: webhookIdInput,
    result: webhookDeliverySchema,
    errors: BY_ID_ERRORS,
  },
  'webhooks-resend': {
    summary: 'Resend one delivery',
    description: "Delivers the delivery's original body again (same `webhook-id`, new timestamp and signature) with a fresh retry schedule; the record goes back to `pending` and `attempt_count` keeps counting. Returns the delivery record.",
    input: webhookResendInput,
    result: webhookDeliverySchema,
    errors: [...BY_ID_ERRORS, 'webhooks.conflict'],
  },
  'webhooks-recover': {
    summary: 'Resend every failed delivery of an endpoint in a time range',
    description: 'Resends every `failed` delivery of the endpoint created in [`since`, `until`) (`until` defaults to now; `since` at most 14 days ago). Events raised while the endpoint was disabled have no delivery and are not invented. Returns `{ queued: n }`.',
    input: webhookRecoverInput,
    result: webhookRecoverResult,
    errors: [...BY_ID_ERRORS, 'webhooks.endpoint_inactive'],
  },
} satisfies Record<string, OperationDoc>;
