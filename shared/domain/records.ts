/**
 * One domain service per entity of the entity list (create, get, update, delete, list), all
 * derived from the definitions. Type-checked to cover every entity type.
 */
import { activityEntity, companyEntity, contactEntity, type EntityType, projectEntity, sourceEntity } from '../schemas/entities/index.js';
import { entityService, type EntityService } from './entity-service.js';

export const services = {
  company: entityService(companyEntity),
  contact: entityService(contactEntity),
  source: entityService(sourceEntity),
  project: entityService(projectEntity),
  activity: entityService(activityEntity),
} satisfies Record<EntityType, EntityService<never> | EntityService>;

export const serviceOf = (type: EntityType): EntityService => services[type] as unknown as EntityService;
