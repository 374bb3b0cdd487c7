/**
 * The operation registry: one line per API operation. The CDK stack creates one route and one
 * Lambda per entry, and the local runner serves the same entries; neither imports handlers
 * directly. Adding an operation = its handler file + its line here + its test; an entity's CRUD
 * operations come from the entity list.
 *
 * access: 'read' functions get read-only table grants; 'write' functions read and write.
 */
import { type Access, batch, crud, type OperationEntry } from '../shared/http/registry.js';
import { ENTITIES } from '../shared/schemas/entities/index.js';

export type { Access, OperationEntry };

const customFieldOps: OperationEntry[] = [
  { name: 'custom-fields-list', family: 'custom_fields', entry: 'custom-fields/list.ts', access: 'read' },
  { name: 'custom-fields-get', family: 'custom_fields', entry: 'custom-fields/get.ts', access: 'read' },
  { name: 'custom-fields-create', family: 'custom_fields', entry: 'custom-fields/create.ts', access: 'write' },
  { name: 'custom-fields-update', family: 'custom_fields', entry: 'custom-fields/update.ts', access: 'write' },
  { name: 'custom-fields-delete', family: 'custom_fields', entry: 'custom-fields/delete.ts', access: 'write' },
];

export const operations: readonly OperationEntry[] = [
  // Every entity of the entity list gets its five CRUD operations (shared/http/registry.ts).
  ...ENTITIES.flatMap(crud),
  ...customFieldOps,
  { name: 'webhooks-create', family: 'webhooks', entry: 'webhooks/create.ts', access: 'write', needs: ['secrets-key', 'secrets-open'] },
  { name: 'webhooks-list', family: 'webhooks', entry: 'webhooks/list.ts', access: 'read' },
  { name: 'webhooks-get', family: 'webhooks', entry: 'webhooks/get.ts', access: 'read' },
  { name: 'webhooks-update', family: 'webhooks', entry: 'webhooks/update.ts', access: 'write', needs: ['secrets-key'] },
  { name: 'webhooks-delete', family: 'webhooks', entry: 'webhooks/delete.ts', access: 'write' },
  { name: 'webhooks-deliveries', family: 'webhooks', entry: 'webhooks/deliveries.ts', access: 'read' },
  { name: 'webhooks-rotate-secret', family: 'webhooks', entry: 'webhooks/rotate-secret.ts', access: 'write', needs: ['secrets-key'] },
  { name: 'webhooks-test', family: 'webhooks', entry: 'webhooks/test.ts', access: 'write', needs: ['queue'] },
  { name: 'webhooks-resend', family: 'webhooks', entry: 'webhooks/resend.ts', access: 'write', needs: ['queue'] },
  { name: 'webhooks-recover', family: 'webhooks', entry: 'webhooks/recover.ts', access: 'write', needs: ['queue'] },
  // --- imports (contract §10) ---
  { name: 'imports-create', family: 'imports', entry: 'imports/create.ts', access: 'write', needs: ['imports-bucket', 'imports-queue'] },
  { name: 'imports-start', family: 'imports', entry: 'imports/start.ts', access: 'write', needs: ['imports-bucket', 'imports-queue'] },
  { name: 'imports-get', family: 'imports', entry: 'imports/get.ts', access: 'read' },
  { name: 'imports-list', family: 'imports', entry: 'imports/list.ts', access: 'read' },
  { name: 'imports-cancel', family: 'imports', entry: 'imports/cancel.ts', access: 'write' },
  { name: 'imports-errors', family: 'imports', entry: 'imports/errors.ts', access: 'read' },
  // --- end imports ---
  // --- inbound emails (contract §11) ---
  { name: 'inbound-emails-address', family: 'inbound_emails', entry: 'inbound-emails/address.ts', access: 'write' },
  { name: 'inbound-emails-list', family: 'inbound_emails', entry: 'inbound-emails/list.ts', access: 'read' },
  { name: 'inbound-emails-get', family: 'inbound_emails', entry: 'inbound-emails/get.ts', access: 'read' },
  { name: 'inbound-emails-delete', family: 'inbound_emails', entry: 'inbound-emails/delete.ts', access: 'write' },
  // --- end inbound emails ---
  // --- batches (contract §13) ---
  // Every entity of the entity list gets its batch operations (shared/http/registry.ts `batch`).
  ...ENTITIES.flatMap(batch),
  // --- end batches ---
];

/** Functions that are not API routes: the authorizer, the fallback route, and the workers. */
export const internalFunctions = {
  authorizer: { entry: 'authorizer.ts', access: 'read' as Access },
  fallback: { entry: 'fallback.ts', access: 'read' as Access },
  stream: { entry: 'stream/handler.ts', access: 'write' as Access },
  delivery: { entry: 'delivery/handler.ts', access: 'write' as Access },
  /** Re-enqueues overdue pending deliveries (EventBridge schedule: lib/webhook-sweeper.ts). */
  sweeper: { entry: 'delivery/sweeper.ts', access: 'write' as Access },
  /** Applies import jobs' rows (SQS-fed: lib/imports.ts). */
  importWorker: { entry: 'imports/worker.ts', access: 'write' as Access },
  /** Processes a received email stored in S3 by SES (lib/inbound-email.ts). */
  inbound: { entry: 'inbound/process.ts', access: 'write' as Access },
} as const;

export const operationByName = new Map(operations.map((op) => [op.name, op]));
