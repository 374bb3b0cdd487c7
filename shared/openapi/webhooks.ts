/**
 * Webhook deliveries as the OpenAPI document describes them (contract §6): one payload per
 * event of every entity that raises events, `{ id, event, timestamp, record_id, data, actor }` (the
 * change log's event, contract §12) where `data` is the
 * record exactly as the API returns it (for `*.deleted`, as it was just before deletion), and
 * `previous_attributes` on `*.updated` (the changed fields with their values before the change),
 * `*.restored` (body as `*.created`) and `*.merged` (with `merged_id`) where the entity has them (§15).
 */
import * as v from 'valibot';
import { changesOf, EVENT_ENTITIES, type EntityDefinition, recordSchema } from '../schemas/entities/index.js';
import { actorSchema } from '../schemas/events.js';

export interface WebhookEventDoc {
  event: string;
  /** Component name of the payload schema. */
  component: string;
  summary: string;
  payload: v.GenericSchema;
}

const pascal = (s: string) => s[0]!.toUpperCase() + s.slice(1);

const EVENTS: readonly WebhookEventDoc[] = EVENT_ENTITIES.flatMap((entity) => {
  const schema = recordSchema(entity as EntityDefinition);
  return changesOf(entity as EntityDefinition).map((change) => ({
    event: `${entity.type}.${change}`,
    component: `${pascal(entity.type)}${pascal(change)}Event`,
    summary: `${pascal(entity.label)} ${change}`,
    payload: v.strictObject({
      id: v.pipe(v.string(), v.metadata({ description: 'The event id (the same on every delivery and retry of this event)', examples: ['evt_3f2a'] })),
      event: v.literal(`${entity.type}.${change}`),
      timestamp: v.pipe(v.string(), v.isoTimestamp(), v.metadata({ description: 'When the change happened (ISO 8601 UTC)' })),
      record_id: v.pipe(v.string(), v.metadata({ description: 'The id of the record that changed' })),
      // `<type>.erased` (contract §18): the record is gone, `data` is its id only.
      data: change === 'erased' ? v.strictObject({ id: v.pipe(v.string(), v.metadata({ description: 'The erased record' })) }) : schema,
      actor: actorSchema,
      // `<type>.merged` (contract §15): `data` is the primary, `merged_id` the record merged into it.
      ...(change === 'merged' ? { merged_id: v.pipe(v.string(), v.metadata({ description: 'The id of the record merged into `data` (now in the trash)' })) } : {}),
      // `<type>.stage_changed` (contract §19): the place it left.
      ...(change === 'stage_changed'
        ? {
            previous_attributes: v.pipe(
              v.object(Object.fromEntries(['pipeline_id', 'stage_id', 'stage', 'status'].map((k) => [k, schema.entries[k]!]))),
              v.metadata({ description: 'The pipeline, stage, stage name and status before the change (a new record\'s empty values when it was created into its stage)' }),
            ),
          }
        : {}),
      ...(change === 'updated'
        ? {
            previous_attributes: v.pipe(
              v.partial(v.object(Object.fromEntries(Object.entries(schema.entries).map(([k, s]) => [k, s])))),
              v.metadata({ description: 'The fields that changed, with their values before the change (as the API returned them)' }),
            ),
          }
        : {}),
    }) as v.GenericSchema,
  }));
});

/** `webhooks-test` sends this one to a single endpoint (never subscribable). */
const TEST_EVENT: WebhookEventDoc = {
  event: 'webhook.test',
  component: 'WebhookTestEvent',
  summary: 'Test delivery (webhooks-test)',
  payload: v.strictObject({
    id: v.pipe(v.string(), v.metadata({ description: 'The event id' })),
    event: v.literal('webhook.test'),
    timestamp: v.pipe(v.string(), v.isoTimestamp(), v.metadata({ description: 'When the test was requested (ISO 8601 UTC)' })),
    data: v.strictObject({ endpoint_id: v.pipe(v.string(), v.uuid(), v.metadata({ description: 'The endpoint tested' })) }),
  }),
};

/** The same schema objects on every call, so the document refers to them by component name. */
export const webhookEvents = (): readonly WebhookEventDoc[] => [...EVENTS, TEST_EVENT];
