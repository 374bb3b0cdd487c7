/**
 * What the operations of every record family do, beyond their documentation: their `access` and
 * whether they are `idempotent` (../resource.ts). Declared once, here, as data: `entityResource`
 * (entities.ts) spreads each into its operation's declaration (from which the registry, the
 * grants and the OpenAPI document follow), and the handler builder (`recordHandler`,
 * shared/http/records.ts) takes the name, access and idempotency of every record handler from the
 * same entry, so a handler cannot disagree with its declaration. Apart from entities.ts so that a
 * handler's bundle carries these few entries, not every operation's schemas and documentation.
 */
import type { OperationDecl } from '../resource.js';

export type EntityOperationEffects = Pick<OperationDecl, 'access' | 'idempotent'>;

const read = { access: 'read' } as const;
const write = { access: 'write' } as const;
const idempotentWrite = { access: 'write', idempotent: true } as const;

export const ENTITY_OPERATIONS = {
  list: read,
  get: read,
  create: idempotentWrite,
  update: write,
  delete: write,
  'batch-create': idempotentWrite,
  'batch-update': write,
  'batch-delete': write,
  'batch-get': read,
  'batch-upsert': idempotentWrite,
  restore: write,
  merge: write,
} as const satisfies Record<string, EntityOperationEffects>;

/** A verb of a record family (`get`, `batch-upsert`, `merge` …). */
export type EntityVerb = keyof typeof ENTITY_OPERATIONS;
