#!/usr/bin/env node
import { App } from 'aws-cdk-lib';
import { buildCrmApp } from '../lib/app.js';
import { stageConfig } from '../lib/stage.js';

/**
 * `npx cdk synth|deploy [-c stage=dev|prod] [-c alarmEmail=ops@example.com]`.
 * The stack is environment-agnostic unless the CLI knows the account and region
 * (CDK_DEFAULT_*), so synth needs no credentials; the stage is part of the stack name,
 * so dev and prod deploy side by side in one account. The stacks: lib/app.ts.
 */
const app = new App();
const stage = stageConfig(app.node.tryGetContext('stage'), { alarmEmail: app.node.tryGetContext('alarmEmail') });

buildCrmApp(
  app,
  stage,
  process.env.CDK_DEFAULT_ACCOUNT && process.env.CDK_DEFAULT_REGION ? { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION } : undefined,
);
