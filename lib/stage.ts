import { RemovalPolicy } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';

export const STAGES = ['dev', 'prod'] as const;
export type StageName = (typeof STAGES)[number];

/** Everything that differs between stages, in one place. */
export interface StageConfig {
  name: StageName;
  /** prod keeps its data: table (with deletion protection), KMS key and logs survive `cdk destroy`. */
  retainData: boolean;
  logRetention: RetentionDays;
  logLevel: 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';
  /** X-Ray active tracing on every function (both stages: traces are how a slow request is explained). */
  tracing: boolean;
  /** Default route throttling of the API stage (requests per second, burst). */
  throttle: { rateLimit: number; burstLimit: number };
  /** Optional e-mail address subscribed to the alarm topic (`-c alarmEmail=...`). */
  alarmEmail?: string;
}

const CONFIGS: Record<StageName, Omit<StageConfig, 'alarmEmail'>> = {
  dev: {
    name: 'dev',
    retainData: false,
    logRetention: RetentionDays.TWO_WEEKS,
    logLevel: 'DEBUG',
    tracing: true,
    throttle: { rateLimit: 50, burstLimit: 100 },
  },
  prod: {
    name: 'prod',
    retainData: true,
    logRetention: RetentionDays.THREE_MONTHS,
    logLevel: 'INFO',
    tracing: true,
    throttle: { rateLimit: 500, burstLimit: 1000 },
  },
};

export function isStageName(value: unknown): value is StageName {
  return typeof value === 'string' && (STAGES as readonly string[]).includes(value);
}

export function stageConfig(name: unknown, extra: { alarmEmail?: string } = {}): StageConfig {
  const stage = name ?? 'dev';
  if (!isStageName(stage)) throw new Error(`unknown stage ${JSON.stringify(stage)}: use -c stage=${STAGES.join('|')}`);
  return { ...CONFIGS[stage], ...(extra.alarmEmail ? { alarmEmail: extra.alarmEmail } : {}) };
}

export const removalPolicy = (config: StageConfig) => (config.retainData ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY);
