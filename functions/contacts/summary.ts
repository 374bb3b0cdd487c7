import { summaryHandler } from '../../shared/http/projects-summary.js';
import { contactEntity } from '../../shared/schemas/entities/index.js';

export const handler = summaryHandler(contactEntity);
