import { stageHistoryHandler } from '../../shared/http/stage-history.js';
import { projectEntity } from '../../shared/schemas/entities/index.js';

export const handler = stageHistoryHandler(projectEntity);
