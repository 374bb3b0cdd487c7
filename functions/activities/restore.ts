import { restoreHandler } from '../../shared/http/trash.js';
import { activityEntity } from '../../shared/schemas/entities/index.js';

export const handler = restoreHandler(activityEntity);
