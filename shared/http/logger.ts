import { Logger } from '@aws-lambda-powertools/logger';

/** Structured JSON logs (Powertools). Never pass secrets, tokens or request bodies to it. */
export const logger = new Logger({ serviceName: 'crm' });
