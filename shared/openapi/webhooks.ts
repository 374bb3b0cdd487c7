/**
 * Webhook deliveries as the OpenAPI document describes them (contract §6): one payload per
 * delivered event, `{ id, event, timestamp, data }` where `data` is the record exactly as the
 * API returns it (for `*.deleted`, as it was just before deletion).
 */
import * as v from 'valibot';
import { companySchema, contactSchema } from '../schemas/records.js';

/** Resources whose changes are delivered, with the record schema their `data` carries. */
const DELIVERED = [
  { resource: 'contact', component: 'Contact', schema: contactSchema },
  { resource: 'company', component: 'Company', schema: companySchema },
] as const;
const CHANGES = ['created', 'updated', 'deleted'] as const;

export interface WebhookEventDoc {
  event: string;
  /** Component name of the payload schema. */
  component: string;
  summary: string;
  payload: v.GenericSchema;
}

const EVENTS: readonly WebhookEventDoc[] = DELIVERED.flatMap(({ resource, component, schema }) =>
    CHANGES.map((change) => ({
      event: `${resource}.${change}`,
      component: `${component}${change[0]!.toUpperCase()}${change.slice(1)}Event`,
      summary: `A ${resource} was ${change}`,
      payload: v.strictObject({
        id: v.pipe(v.string(), v.description('The event id')),
        event: v.literal(`${resource}.${change}`),
        timestamp: v.pipe(v.string(), v.description('When the change happened (ISO 8601 UTC)')),
        data: schema,
      }),
  })),
);

/** The same schema objects on every call, so the document refers to them by component name. */
export const webhookEvents = (): readonly WebhookEventDoc[] => EVENTS;
