/** Keys of webhook endpoints and their deliveries (contract §6). */
import { ACCOUNT, defineKeys, ORDER, personalFlags } from './define.js';

const ENDPOINTS = `${ACCOUNT}#wh`;
const DELIVERIES = `${ENDPOINTS}#{endpointId}`;
const DUE = 'WHDUE#{hour}#{shard:1}';

export const WEBHOOK_KEYS = defineKeys({
  /** Webhook endpoints: one partition per account, read once per stream batch per account. */
  webhookEndpoint: [ENDPOINTS, '{id}'],
  webhookEndpointPartition: ENDPOINTS,
  /**
   * Deliveries: one partition per endpoint, newest first in a reverse query. Both parts are
   * derived from the stream event, so a replayed batch addresses the same item.
   */
  webhookDelivery: [DELIVERIES, ORDER],
  webhookDeliveryPartition: DELIVERIES,
  /**
   * Deliveries of a contact's events, by contact (one entry per delivery, written before it):
   * an erasure finds the stored bodies that hold the person (contract §18).
   */
  webhookDeliveryOfRecord: [`${ACCOUNT}#whr#{recordId}`, '{endpointId}#{createdAt}#{id}'],
  webhookDeliveryOfRecordPartition: `${ACCOUNT}#whr#{recordId}`,
  /** How many endpoints an account has (at most 20), changed in the endpoint's transaction. */
  webhookEndpointCount: [`${ACCOUNT}#whn`, 'N'],
  /**
   * The sweeper's index of pending deliveries by due time (sparse GSI1 attributes, present only
   * while a delivery is pending): one partition per hour of due time and shard.
   */
  webhookDue: { gsi1: [DUE, '{dueAt}#{id}'] },
  webhookDuePartition: DUE,
});

export const WEBHOOK_PERSONAL = /* @__PURE__ */ personalFlags(WEBHOOK_KEYS, { webhookEndpoint: false, webhookDelivery: true, webhookDeliveryOfRecord: false, webhookEndpointCount: false });
