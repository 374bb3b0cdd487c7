import { trashListHandler } from '../../shared/http/trash.js';

export const handler = trashListHandler();
