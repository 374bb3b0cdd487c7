/**
 * The API description of every operation, in one place: a loop over the families' resource
 * definitions (shared/schemas/resources/), each operation with the valibot schema its body is
 * validated with, the schema of its result, a summary, and the error codes it can return besides
 * the ones every operation of its kind returns (see errors.ts).
 *
 * The OpenAPI document (document.ts) and the typed client (client/, generated from the document)
 * are both derived from this table; nothing here is written twice.
 */
import type * as v from 'valibot';
import { idOnlyInput } from '../schemas/common.js';
import { type OperationDoc, operationName } from '../schemas/resource.js';
import { RESOURCES } from '../schemas/resources/index.js';
import { deletedSchema } from '../schemas/resources/shared.js';

export type { OperationDoc };

/** Named component schemas: the document refers to these by name wherever they are used. */
export const componentSchemas: Record<string, v.GenericSchema> = Object.assign(
  { Deleted: deletedSchema, IdInput: idOnlyInput },
  ...RESOURCES.map((r) => r.components),
);

/** Every operation's description, by operation name. */
export const operationDocs: Readonly<Record<string, OperationDoc>> = Object.fromEntries(
  RESOURCES.flatMap((r) => Object.entries(r.operations).map(([verb, op]): [string, OperationDoc] => [operationName(r, verb), op])),
);
