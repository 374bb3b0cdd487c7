import { listHandler } from '../../shared/http/crud.js';
import { sourceEntity } from '../../shared/schemas/entities/index.js';

export const handler = listHandler(sourceEntity);
