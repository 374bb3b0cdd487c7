import { summaryHandler } from '../../shared/http/projects-summary.js';
import { projectEntity } from '../../shared/schemas/entities/index.js';

export const handler = summaryHandler(projectEntity);
