import { restoreHandler } from '../../shared/http/trash.js';
import { contactEntity } from '../../shared/schemas/entities/index.js';

export const handler = restoreHandler(contactEntity);
