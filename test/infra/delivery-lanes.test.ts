/**
 * Fan-out delivery lanes in the CDK stack: the lane worker function, what fan-out is told and may
 * invoke, and what the worker may do. Synthesized under cdk.json's context (its feature flags)
 * from stand-in assets: what is checked here is the template; relay-stack.test.ts loads every
 * real bundle, the worker's included.
 */
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { LANE_WORKER_CONNECTIONS_ACTIONS } from '../../infra/constructs/delivery-lanes.ts';
import { projectContext } from '../../infra/project-context.ts';
import { RelayStack } from '../../infra/relay-stack.ts';
import { settingsFromContext } from '../../infra/relay-settings.ts';
import { FANOUT_LANE_TIMEOUT_SECONDS, FANOUT_TIMEOUT_SECONDS } from '../../src/config/function-timeouts.ts';
import { DEFAULT_FANOUT_LANE_DELIVERIES, DEFAULT_FANOUT_MAX_LANES, readRelayConfig } from '../../src/config/relay-config.ts';
import { FANOUT_VARIABLES, RELAY_VARIABLES } from '../../src/config/relay-environment.ts';
import { LANE_WORKER_ATTEMPTS } from '../../src/relay/fanout/delivery-lanes.ts';
import { standInAssetDirs, standInConsoleDir } from './stand-in-assets.ts';
import { actionsOf, logicalIdOf, propertiesOf, refersTo, render, resourcesOf, resourcesOfType, statementsOfRole } from './template-queries.ts';
import type { Json } from './template-queries.ts';

interface Scenario {
  stack: RelayStack;
  template: Template;
}

function synthesize(context: Record<string, string>, id: string): Scenario {
  const app = new App({ context: { ...projectContext(), ...context } });
  const stack = new RelayStack(app, id, { settings: settingsFromContext(app.node), assetDirs: standInAssetDirs, consoleDir: standInConsoleDir });
  return { stack, template: Template.fromStack(stack) };
}

const defaults = synthesize({}, 'AepRelay-lanes');
const withoutLanes = synthesize({ fanoutLanes: '1' }, 'AepRelay-one-lane');
const tuned = synthesize({ fanoutLanes: '4', fanoutLaneDeliveries: '500' }, 'AepRelay-four-lanes');

const variablesOf = ({ template }: Scenario, fn: RelayStack['functions']['fanout']): Json => (propertiesOf(template, fn).Environment as { Variables: Json }).Variables;
const invokesOf = ({ template }: Scenario, fn: RelayStack['functions']['fanout']) => statementsOfRole(template, fn.role!).filter((statement) => actionsOf(statement).some((action) => action.startsWith('lambda:')));
const workerArn = ({ stack }: Scenario) => `\${${logicalIdOf(stack.functions.fanoutlane)}.Arn}`;

describe('delivery lanes', () => {
  it('deploys the lane worker on nodejs22.x, arm64, at 1024 MB, timing out soon enough for fan-out to run a lane twice and then itself', () => {
    const { stack, template } = defaults;
    expect(propertiesOf(template, stack.functions.fanoutlane)).toMatchObject({ Runtime: 'nodejs22.x', Architectures: ['arm64'], MemorySize: 1024, Timeout: FANOUT_LANE_TIMEOUT_SECONDS });
    expect(FANOUT_LANE_TIMEOUT_SECONDS).toBe(15);
    // Every worker run of a lane timed out still leaves half of fan-out's own timeout for its last run.
    expect(LANE_WORKER_ATTEMPTS * FANOUT_LANE_TIMEOUT_SECONDS).toBeLessThanOrEqual(FANOUT_TIMEOUT_SECONDS / 2);
    expect(propertiesOf(template, stack.functions.fanout).Timeout).toBe(FANOUT_TIMEOUT_SECONDS);
  });

  it('gives the worker no event source and no resource policy: only a role allowed to invoke it can', () => {
    const { stack, template } = defaults;
    const workerId = logicalIdOf(stack.functions.fanoutlane);
    const mappings = Object.values(resourcesOfType(template, 'AWS::Lambda::EventSourceMapping')).filter((mapping) => refersTo(mapping.Properties?.FunctionName, workerId));
    expect(mappings).toEqual([]);
    const permissions = Object.values(resourcesOfType(template, 'AWS::Lambda::Permission')).filter((permission) => refersTo(permission.Properties?.FunctionName, workerId));
    expect(permissions).toEqual([]);
  });

  it("tells fan-out the worker's name, the lane count and the lane size; readRelayConfig reads them back", () => {
    const { stack } = defaults;
    const variables = variablesOf(defaults, stack.functions.fanout);
    expect(variables[RELAY_VARIABLES.laneFunction]).toEqual({ Ref: logicalIdOf(stack.functions.fanoutlane) });
    expect(variables[FANOUT_VARIABLES.maxLanes]).toBe(String(DEFAULT_FANOUT_MAX_LANES));
    expect(variables[FANOUT_VARIABLES.laneDeliveries]).toBe(String(DEFAULT_FANOUT_LANE_DELIVERIES));
    const config = readRelayConfig(Object.fromEntries(Object.entries(variables).map(([key, value]) => [key, render(value)])));
    expect(config.laneFunction).toBe(`\${${logicalIdOf(stack.functions.fanoutlane)}}`);
    expect(config.fanout).toMatchObject({ maxLanes: 8, laneDeliveries: 2000 });
    // Only fan-out hands lanes on; a worker runs the lane it was given (it has no runner to invoke).
    for (const fn of stack.functions.all.filter((candidate) => candidate !== stack.functions.fanout)) expect(variablesOf(defaults, fn)[RELAY_VARIABLES.laneFunction], fn.node.id).toBeUndefined();
  });

  it("lets fan-out invoke the worker alone, on the worker's own ARN (no version or alias wildcard), and nothing else invoke it", () => {
    const { stack } = defaults;
    const fanoutInvokes = invokesOf(defaults, stack.functions.fanout);
    expect(fanoutInvokes.flatMap(actionsOf)).toEqual(['lambda:InvokeFunction']);
    expect(fanoutInvokes.flatMap(resourcesOf).map(render)).toEqual([workerArn(defaults)]);
    for (const fn of stack.functions.all.filter((candidate) => candidate !== stack.functions.fanout)) {
      const onWorker = invokesOf(defaults, fn).filter((statement) => resourcesOf(statement).some((resource) => refersTo(resource, logicalIdOf(stack.functions.fanoutlane))));
      expect(onWorker, fn.node.id).toEqual([]);
    }
  });

  it('lets the worker post to and close WebSocket connections on this stage (POST, DELETE), never look them up (GET)', () => {
    const { stack, template } = defaults;
    const arnOf = (verb: string) => `arn:\${AWS::Partition}:execute-api:\${AWS::Region}:\${AWS::AccountId}:\${${logicalIdOf(stack.webSocketApi.api)}}/dev/${verb}/@connections/*`;
    const statements = statementsOfRole(template, stack.functions.fanoutlane.role!).filter((statement) => actionsOf(statement).includes('execute-api:ManageConnections'));
    expect(statements.flatMap(actionsOf)).toEqual(['execute-api:ManageConnections']);
    expect(statements.flatMap(resourcesOf).map(render).sort()).toEqual([arnOf('DELETE'), arnOf('POST')]);
    // Where to post: the execute-api stage, as for fan-out.
    expect(render(variablesOf(defaults, stack.functions.fanoutlane)[RELAY_VARIABLES.managementEndpoint])).toBe(render(variablesOf(defaults, stack.functions.fanout)[RELAY_VARIABLES.managementEndpoint]));
  });

  it('grants the worker exactly its connections-table actions: no GetItem, no Scan, nothing on the events or tenants tables, no stream', () => {
    const { stack, template } = defaults;
    const statements = statementsOfRole(template, stack.functions.fanoutlane.role!);
    const connectionsArn = `\${${logicalIdOf(stack.tables.connections)}.Arn}`;
    const dynamo = statements.filter((statement) => actionsOf(statement).some((action) => action.startsWith('dynamodb:')));
    expect(dynamo.flatMap(resourcesOf).map(render)).toEqual([connectionsArn]);
    expect(dynamo.flatMap(actionsOf).sort()).toEqual(['dynamodb:BatchWriteItem', 'dynamodb:DeleteItem', 'dynamodb:PutItem', 'dynamodb:Query', 'dynamodb:UpdateItem']);
    expect([...LANE_WORKER_CONNECTIONS_ACTIONS].sort()).toEqual(dynamo.flatMap(actionsOf).sort());
    for (const table of [stack.tables.events, stack.tables.tenants]) {
      expect(statements.filter((statement) => resourcesOf(statement).some((resource) => refersTo(resource, logicalIdOf(table)))), table.node.id).toEqual([]);
    }
    // Everything the role may do: its log group, its table actions and the two Management API verbs.
    expect([...new Set(statements.flatMap(actionsOf))].sort()).toEqual([...LANE_WORKER_CONNECTIONS_ACTIONS, 'execute-api:ManageConnections', 'logs:CreateLogStream', 'logs:PutLogEvents'].sort());
  });

  it('keeps every delivery in fan-out with -c fanoutLanes=1: one lane, no worker name, no invoke grant', () => {
    const { stack } = withoutLanes;
    const variables = variablesOf(withoutLanes, stack.functions.fanout);
    expect(variables[FANOUT_VARIABLES.maxLanes]).toBe('1');
    expect(variables[RELAY_VARIABLES.laneFunction]).toBeUndefined();
    expect(invokesOf(withoutLanes, stack.functions.fanout)).toEqual([]);
    const config = readRelayConfig(Object.fromEntries(Object.entries(variables).map(([key, value]) => [key, render(value)])));
    expect(config.laneFunction).toBeUndefined();
    expect(config.fanout.maxLanes).toBe(1);
    // The worker stays deployed (so turning lanes on again changes only fan-out).
    expect(propertiesOf(withoutLanes.template, stack.functions.fanoutlane).MemorySize).toBe(1024);
  });

  it('takes the lane count and the lane size from context (-c fanoutLanes, -c fanoutLaneDeliveries)', () => {
    const { stack } = tuned;
    const variables = variablesOf(tuned, stack.functions.fanout);
    expect(variables[FANOUT_VARIABLES.maxLanes]).toBe('4');
    expect(variables[FANOUT_VARIABLES.laneDeliveries]).toBe('500');
    expect(variables[RELAY_VARIABLES.laneFunction]).toEqual({ Ref: logicalIdOf(stack.functions.fanoutlane) });
    expect(invokesOf(tuned, stack.functions.fanout).flatMap(resourcesOf).map(render)).toEqual([workerArn(tuned)]);
  });
});
