/**
 * The operation registry: one entry per operation of every family's resource definition
 * (shared/schemas/resources/). The CDK stack creates one route and one Lambda per entry, and the
 * local runner serves the same entries; neither imports handlers directly. Adding an operation =
 * its entry in the family's resource definition + its one-line handler `functions/<prefix>/<verb>.ts`
 * + its test.
 *
 * access: 'read' functions get read-only table grants; 'write' functions read and write.
 */
import { type OperationEntry, registryEntries } from '../shared/http/registry.js';
import { RESOURCES } from '../shared/schemas/resources/index.js';

export type { OperationEntry };

export const operations: readonly OperationEntry[] = RESOURCES.flatMap(registryEntries);

export const operationByName = new Map(operations.map((op) => [op.name, op]));
