/**
 * Every family's resource definition, in the order of the API's documentation: the record
 * families (derived from the entity list), then the others. The registry (functions/operations.ts),
 * the OpenAPI document and the client are loops over this list.
 */
import { ENTITIES } from '../entities/index.js';
import type { ResourceDefinition } from '../resource.js';
import { apiKeysResource } from './api-keys.js';
import { customFieldsResource } from './custom-fields.js';
import { entityResource } from './entities.js';
import { erasuresResource } from './erasures.js';
import { eventsResource } from './events.js';
import { exportsResource } from './exports.js';
import { importsResource } from './imports.js';
import { inboundEmailsResource } from './inbound-emails.js';
import { membersResource } from './members.js';
import { pipelinesResource } from './pipelines.js';
import { reassignmentsResource } from './reassignments.js';
import { trashResource } from './trash.js';
import { webhooksResource } from './webhooks.js';

export { apiKeysResource, customFieldsResource, entityResource, erasuresResource, eventsResource, exportsResource, importsResource, inboundEmailsResource, membersResource, pipelinesResource, reassignmentsResource, trashResource, webhooksResource };

export const RESOURCES: readonly ResourceDefinition[] = [
  ...ENTITIES.map(entityResource),
  customFieldsResource,
  webhooksResource,
  importsResource,
  exportsResource,
  inboundEmailsResource,
  apiKeysResource,
  eventsResource,
  trashResource,
  erasuresResource,
  pipelinesResource,
  membersResource,
  reassignmentsResource,
];
