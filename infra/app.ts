/**
 * The CDK app (`npx cdk synth`, `npx cdk deploy -c stage=prod …`): builds the Lambda
 * bundles and the console, then synthesizes one relay stack named after its stage, checked by cdk-nag's
 * AwsSolutions rules (an unsuppressed error fails the synth).
 *
 * Context keys and defaults: infra/relay-settings.ts.
 */
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { bundleFunctions } from './bundle.ts';
import { buildConsole } from './console-build.ts';
import { RelayStack } from './relay-stack.ts';
import { settingsFromContext, stackNameOf } from './relay-settings.ts';

const app = new App();
const settings = settingsFromContext(app.node);
const { assetDirs } = await bundleFunctions();
const consoleDir = await buildConsole();

new RelayStack(app, stackNameOf(settings.stage), {
  description: `AEP relay (${settings.stage}): HTTP, SSE and WebSocket bindings over a DynamoDB event log`,
  settings,
  assetDirs,
  consoleDir,
  // Account and region from the deploying credentials (CDK_DEFAULT_*); unset, the template stays environment-agnostic.
  ...(process.env.CDK_DEFAULT_ACCOUNT === undefined || process.env.CDK_DEFAULT_REGION === undefined
    ? {}
    : { env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION } }),
});

// cdk-nag 3 is a CDK policy-validation plugin: it reports during synth (policy-validation-report.json).
Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }));
app.synth();
