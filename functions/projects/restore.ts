import { restoreHandler } from '../../shared/http/trash.js';
import { projectEntity } from '../../shared/schemas/entities/index.js';

export const handler = restoreHandler(projectEntity);
