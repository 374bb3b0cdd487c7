/**
 * Verifying webhook deliveries (contract §6): the service signs every delivery per the Standard
 * Webhooks specification; this wraps the `standardwebhooks` package (pure JavaScript, runs in
 * Node and browsers/edge runtimes).
 *
 *   const event = verifyWebhook(signingSecret, rawBody, request.headers);
 *   if (event.event === 'contact.created') console.log(event.data.first_name);
 */
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import type { InferOutput } from 'valibot';
import type { webhookPayloadSchema } from '../shared/schemas/webhooks.js';

export { WebhookVerificationError };

/**
 * A delivered event: `{ id, event, timestamp, record_id, data, previous_attributes?, actor }`, `data`
 * being the record as the API returns it (the change log's event, `events-list`; `webhook.test`
 * carries only `{ id, event, timestamp, data }`).
 */
export type WebhookEvent = InferOutput<typeof webhookPayloadSchema>;

type HeaderSource = Headers | Record<string, string | string[] | undefined>;

function headerRecord(headers: HeaderSource): Record<string, string> {
  const out: Record<string, string> = {};
  if (typeof (headers as Headers).forEach === 'function' && typeof (headers as Headers).get === 'function') {
    (headers as Headers).forEach((value, key) => {
      out[key.toLowerCase()] = value;
    });
    return out;
  }
  for (const [key, value] of Object.entries(headers as Record<string, string | string[] | undefined>)) {
    if (value !== undefined) out[key.toLowerCase()] = Array.isArray(value) ? value.join(' ') : value;
  }
  return out;
}

/**
 * Checks the `webhook-signature` of a delivery against the endpoint's signing secret
 * (`whsec_…`, returned by webhooks-create) and the timestamp tolerance (5 minutes), then
 * returns the parsed payload. Pass the raw body exactly as received. Throws
 * WebhookVerificationError when the signature, the headers or the timestamp do not check out.
 */
export function verifyWebhook(secret: string, rawBody: string, headers: HeaderSource): WebhookEvent {
  return new Webhook(secret).verify(rawBody, headerRecord(headers)) as WebhookEvent;
}
