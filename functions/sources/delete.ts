import { deleteHandler } from '../../shared/http/crud.js';
import { sourceEntity } from '../../shared/schemas/entities/index.js';

export const handler = deleteHandler(sourceEntity);
