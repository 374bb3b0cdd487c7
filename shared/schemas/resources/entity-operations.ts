/**
 * What the CRUD and batch operations of every record family do, beyond their documentation:
 * their `access` and whether they are `idempotent` (../resource.ts). Declared once, here, as
 * data: `entityResource` (entities.ts) spreads each into its operation's declaration (from which
 * the registry, the grants and the OpenAPI document follow), and the handlers of the idempotent
 * ones (`createHandler`, `batchCreateHandler`, `batchUpsertHandler` of
 * shared/http/idempotent-records.ts) apply idempotency from the same entry, so a handler cannot
 * disagree with its declaration. Apart from entities.ts, one constant each, so that a handler's
 * bundle carries its own entry, not every operation's schemas and documentation.
 */
import type { OperationDecl } from '../resource.js';

type Effects = Pick<OperationDecl, 'access' | 'idempotent'>;

export const ENTITY_CREATE = { access: 'write', idempotent: true } as const satisfies Effects;
export const ENTITY_BATCH_CREATE = { access: 'write', idempotent: true } as const satisfies Effects;
export const ENTITY_BATCH_UPSERT = { access: 'write', idempotent: true } as const satisfies Effects;

export const ENTITY_OPERATIONS = {
  list: { access: 'read' },
  get: { access: 'read' },
  create: ENTITY_CREATE,
  update: { access: 'write' },
  delete: { access: 'write' },
  'batch-create': ENTITY_BATCH_CREATE,
  'batch-update': { access: 'write' },
  'batch-delete': { access: 'write' },
  'batch-get': { access: 'read' },
  'batch-upsert': ENTITY_BATCH_UPSERT,
} as const satisfies Record<string, Effects>;
