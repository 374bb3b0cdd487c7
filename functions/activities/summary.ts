import { summaryHandler } from '../../shared/http/projects-summary.js';
import { activityEntity } from '../../shared/schemas/entities/index.js';

export const handler = summaryHandler(activityEntity);
