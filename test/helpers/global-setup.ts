import type { TestProject } from 'vitest/node';
import { LOCAL_AWS_ENV, startDynamo } from '../../local/dynamo.js';

/** One DynamoDB Local for the whole run; every test file creates its own table in it. */
export default async function setup(project: TestProject) {
  const dynamo = await startDynamo();
  Object.assign(process.env, LOCAL_AWS_ENV);
  project.provide('dynamoEndpoint', dynamo.endpoint);
  return async () => {
    await dynamo.stop();
  };
}

declare module 'vitest' {
  export interface ProvidedContext {
    dynamoEndpoint: string;
  }
}
