/**
 * One domain service per entity of the entity list (create, get, update, delete, list), all
 * derived from the definitions: a new entity gets its service from its line in ENTITIES.
 */
import { type Entity, ENTITIES, type EntityType } from '../schemas/entities/index.js';
import { entityService, type EntityService } from './entity-service.js';

type Services = { [E in Entity as E['type']]: EntityService<E> };

export const services = Object.fromEntries(ENTITIES.map((e) => [e.type, entityService(e)])) as unknown as Services;

export const serviceOf = (type: EntityType): EntityService => services[type] as unknown as EntityService;
