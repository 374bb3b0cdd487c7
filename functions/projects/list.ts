import { listHandler } from '../../shared/http/crud.js';
import { projectEntity } from '../../shared/schemas/entities/index.js';

export const handler = listHandler(projectEntity);
