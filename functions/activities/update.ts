import { updateHandler } from '../../shared/http/crud.js';
import { activityEntity } from '../../shared/schemas/entities/index.js';

export const handler = updateHandler(activityEntity);
