/**
 * The operation registry: one line per API operation. The CDK stack creates one route and one
 * Lambda per entry, and the local runner serves the same entries; neither imports handlers
 * directly. Adding an operation = its handler file + its line here + its test; an entity's CRUD
 * operations come from the entity list.
 *
 * access: 'read' functions get read-only table grants; 'write' functions read and write.
 */
import { type Access, batch, crud, type OperationEntry, trash } from '../shared/http/registry.js';
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
  { name: 'webhooks-create', family: 'webhooks', entry: 'webhooks/create.ts', access: 'write', bindings: { secretsKey: 'encrypt-decrypt' } },
  { name: 'webhooks-list', family: 'webhooks', entry: 'webhooks/list.ts', access: 'read' },
  { name: 'webhooks-get', family: 'webhooks', entry: 'webhooks/get.ts', access: 'read' },
  { name: 'webhooks-update', family: 'webhooks', entry: 'webhooks/update.ts', access: 'write', bindings: { secretsKey: 'encrypt' } },
  { name: 'webhooks-delete', family: 'webhooks', entry: 'webhooks/delete.ts', access: 'write' },
  { name: 'webhooks-deliveries', family: 'webhooks', entry: 'webhooks/deliveries.ts', access: 'read' },
  { name: 'webhooks-rotate-secret', family: 'webhooks', entry: 'webhooks/rotate-secret.ts', access: 'write', bindings: { secretsKey: 'encrypt' } },
  { name: 'webhooks-test', family: 'webhooks', entry: 'webhooks/test.ts', access: 'write', bindings: { deliveryQueue: 'send' } },
  { name: 'webhooks-resend', family: 'webhooks', entry: 'webhooks/resend.ts', access: 'write', bindings: { deliveryQueue: 'send' } },
  { name: 'webhooks-recover', family: 'webhooks', entry: 'webhooks/recover.ts', access: 'write', bindings: { deliveryQueue: 'send' } },
  // --- imports (contract §10) ---
  { name: 'imports-create', family: 'imports', entry: 'imports/create.ts', access: 'write', bindings: { importsBucket: 'write', importsQueue: 'send' } },
  { name: 'imports-start', family: 'imports', entry: 'imports/start.ts', access: 'write', bindings: { importsBucket: 'write', importsQueue: 'send' } },
  { name: 'imports-get', family: 'imports', entry: 'imports/get.ts', access: 'read' },
  { name: 'imports-list', family: 'imports', entry: 'imports/list.ts', access: 'read' },
  { name: 'imports-cancel', family: 'imports', entry: 'imports/cancel.ts', access: 'write' },
  { name: 'imports-errors', family: 'imports', entry: 'imports/errors.ts', access: 'read' },
  // --- end imports ---
  // --- exports (contract §16) ---
  { name: 'exports-create', family: 'exports', entry: 'exports/create.ts', access: 'write', bindings: { exportsQueue: 'send' } },
  { name: 'exports-get', family: 'exports', entry: 'exports/get.ts', access: 'read', bindings: { exportsBucket: 'read' } },
  { name: 'exports-list', family: 'exports', entry: 'exports/list.ts', access: 'read', bindings: { exportsBucket: 'read' } },
  // --- end exports ---
  // --- inbound emails (contract §11) ---
  { name: 'inbound-emails-address', family: 'inbound_emails', entry: 'inbound-emails/address.ts', access: 'write', bindings: { inboundDomain: 'read' } },
  { name: 'inbound-emails-list', family: 'inbound_emails', entry: 'inbound-emails/list.ts', access: 'read', bindings: { inboundDomain: 'read' } },
  { name: 'inbound-emails-get', family: 'inbound_emails', entry: 'inbound-emails/get.ts', access: 'read', bindings: { inboundDomain: 'read' } },
  { name: 'inbound-emails-delete', family: 'inbound_emails', entry: 'inbound-emails/delete.ts', access: 'write', bindings: { inboundDomain: 'read' } },
  // --- end inbound emails ---
  // --- api keys (contract §14) ---
  // The scope each operation needs comes from its family and name (shared/auth/scopes.ts); these four need api_keys:manage.
  { name: 'api-keys-create', family: 'api_keys', entry: 'api-keys/create.ts', access: 'write' },
  { name: 'api-keys-list', family: 'api_keys', entry: 'api-keys/list.ts', access: 'read' },
  { name: 'api-keys-get', family: 'api_keys', entry: 'api-keys/get.ts', access: 'read' },
  { name: 'api-keys-revoke', family: 'api_keys', entry: 'api-keys/revoke.ts', access: 'write' },
  // --- end api keys ---
  // --- change log (contract §12) ---
  { name: 'events-list', family: 'events', entry: 'events/list.ts', access: 'read' },
  { name: 'webhooks-replay', family: 'webhooks', entry: 'webhooks/replay.ts', access: 'write', bindings: { deliveryQueue: 'send' } },
  // --- end change log ---
  // --- batches (contract §13) ---
  // Every entity of the entity list gets its batch operations (shared/http/registry.ts `batch`).
  ...ENTITIES.flatMap(batch),
  // --- end batches ---
  // --- trash, restore and merge (contract §15) ---
  // `-restore` / `-merge` of the entities whose definitions have `trash` / `merge` (shared/http/registry.ts `trash`).
  ...ENTITIES.flatMap(trash),
  { name: 'trash-list', family: 'trash', entry: 'trash/list.ts', access: 'read' },
  // --- end trash ---
];

export const operationByName = new Map(operations.map((op) => [op.name, op]));
