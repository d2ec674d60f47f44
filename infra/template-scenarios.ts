/**
 * The three configurations whose templates are linted (`npm run lint:templates`,
 * bin/lint-templates.ts) and asserted on (test/infra/deploy-scenarios.test.ts): the defaults, a
 * cross-origin dashboard's (CORS), and every option set away from its default at once. Context
 * as `cdk deploy -c key=value` takes it (infra/relay-settings.ts).
 */

export const TEMPLATE_SCENARIOS = {
  defaults: {},
  cors: { corsOrigins: 'https://dashboard.example.com,http://localhost:5173' },
  'all-options': {
    stage: 'prod',
    replayBuffer: '500',
    retentionDays: '7',
    logLevel: 'debug',
    logRetentionDays: '90',
    removalPolicy: 'retain',
    deletionProtection: 'true',
    domainName: 'relay.example.com',
    certificateArn: 'arn:aws:acm:us-east-1:111111111111:certificate/00000000-0000-0000-0000-000000000000',
    alarmTopicArn: 'arn:aws:sns:eu-west-1:111111111111:relay-alarms',
    alarmEmail: 'ops@example.com',
    webAclArn: 'arn:aws:wafv2:us-east-1:111111111111:global/webacl/relay/00000000-0000-0000-0000-000000000000',
    webSocketAccessLogs: 'true',
    corsOrigins: 'https://dashboard.example.com,http://localhost:5173',
    bridgeEventBuses: 'arn:aws:events:eu-west-1:111111111111:event-bus/agents',
    streamConcurrency: '300',
    streamHeadroom: '30',
    reserveSinkRetryConcurrency: 'true',
    tracing: 'true',
    edgeAccessLogs: 'true',
    originSecretRotation: 'true',
    httpRateLimit: '500',
    httpBurstLimit: '1000',
    fanoutLanes: '4',
  },
} as const satisfies Record<string, Record<string, string>>;

export type TemplateScenario = keyof typeof TEMPLATE_SCENARIOS;
