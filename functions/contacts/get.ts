import { getHandler } from '../../shared/http/crud.js';
import { contactEntity } from '../../shared/schemas/entities/index.js';

export const handler = getHandler(contactEntity);
