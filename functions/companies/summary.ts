import { summaryHandler } from '../../shared/http/projects-summary.js';
import { companyEntity } from '../../shared/schemas/entities/index.js';

export const handler = summaryHandler(companyEntity);
