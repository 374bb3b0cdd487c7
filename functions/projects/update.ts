import { updateHandler } from '../../shared/http/crud.js';
import { projectEntity } from '../../shared/schemas/entities/index.js';

export const handler = updateHandler(projectEntity);
