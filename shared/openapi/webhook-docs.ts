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
};

const WEBHOOK_BODY_ERRORS = ['webhooks.url_required', 'webhooks.invalid_url', 'webhooks.events_required', 'webhooks.invalid_events'] as const;

export const webhookOperationDocs = {
  'webhooks-create': {
    summary: 'Register a webhook endpoint',
    description: 'Returns the endpoint and its signing secret (`whsec_…`); the secret is shown only here. Deliveries are signed per Standard Webhooks (see `webhooks`).',
    input: webhookCreateInput,
    result: webhookCreateResult,
    errors: WEBHOOK_BODY_ERRORS,
  },
  'webhooks-list': { summary: 'List webhook endpoints, newest first', input: webhookListInput, result: webhookListResult },
  'webhooks-get': { summary: 'Get a webhook endpoint', input: webhookIdInput, result: webhookEndpointSchema },
  'webhooks-update': { summary: 'Update a webhook endpoint (url, description, events, is_active)', input: webhookUpdateInput, result: webhookEndpointSchema, errors: WEBHOOK_BODY_ERRORS },
  'webhooks-delete': { summary: 'Delete a webhook endpoint (nothing more is sent to it)', input: webhookIdInput, result: webhookDeleteResult },
  'webhooks-deliveries': {
    summary: 'Recent delivery attempts of an endpoint, newest first',
    input: webhookDeliveriesInput,
    result: webhookDeliveriesResult,
    errors: ['webhooks.invalid_id', 'webhooks.not_found'],
  },
} satisfies Record<string, OperationDoc>;
