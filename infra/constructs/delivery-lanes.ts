/**
 * Fan-out delivery lanes in AWS (src/relay/fanout/delivery-lanes.ts): a batch with more planned
 * deliveries than `laneDeliveries` is split by connection into up to `maxLanes` lanes; the fan-out
 * function runs lane 0 itself and invokes the lane worker (functions/fanoutlane) synchronously
 * for each other lane, so one shard's batch is posted by several invocations at once.
 *
 * Grants, each exactly what the code calls:
 * - fan-out: `lambda:InvokeFunction` on the worker's own ARN. Not `grantInvoke`, which adds
 *   `<ARN>:*` (every version and alias) for nothing: fan-out invokes the unqualified name.
 *   With `maxLanes` 1 fan-out is not told the worker's name and may not invoke it.
 * - worker: on the connections table only, what one lane's deliveries write there
 *   (src/relay/fanout/connection-delivery.ts): a gone connection's state removed
 *   (`ConnectionStore.removeConnection`: Query of its partition, BatchWriteItem and DeleteItem),
 *   and with it its connection slot released (`QuotaStore.releaseConnection`: DeleteItem of the
 *   lease, UpdateItem of the tenant's count, both in the connections table); closing marks on
 *   subscription entries (`markClosing`, UpdateItem); events parked on a replaying subscription
 *   (`parkPending`, UpdateItem); SSE inbox deliveries and closing notices (`InboxStore`, PutItem).
 *   No GetItem: the work carries every entry fan-out read. Nothing on the events or tenants
 *   tables, no stream, no event source. Its Management API verbs (POST, DELETE) are granted with
 *   every function's, from `MANAGEMENT_VERBS` (relay-functions.ts).
 */
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import { DEFAULT_FANOUT_LANE_DELIVERIES, DEFAULT_FANOUT_MAX_LANES } from '../../src/config/relay-config.ts';
import { FANOUT_VARIABLES, RELAY_VARIABLES } from '../../src/config/relay-environment.ts';
import { grantTableActions } from './table-access.ts';
import type { TableAction } from './table-access.ts';

/** What the lane worker does on the connections table (see the file comment), and nothing else. */
export const LANE_WORKER_CONNECTIONS_ACTIONS: readonly TableAction[] = ['dynamodb:Query', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:BatchWriteItem'];

export interface RelayDeliveryLanesProps {
  /** functions/fanout: splits a big batch, runs lane 0 and invokes the worker for the others. */
  fanout: LambdaFunction;
  /** functions/fanoutlane: runs one lane's deliveries. */
  worker: LambdaFunction;
  /** The connections table, the only one the worker uses. */
  connections: ITable;
  /**
   * Lanes one batch is split into at most (`AEP_FANOUT_MAX_LANES`); 1 keeps every delivery in the
   * fan-out invocation.
   * @default DEFAULT_FANOUT_MAX_LANES
   */
  maxLanes?: number;
  /**
   * Planned deliveries one lane takes before the batch is split into another (`AEP_FANOUT_LANE_DELIVERIES`).
   * @default DEFAULT_FANOUT_LANE_DELIVERIES
   */
  laneDeliveries?: number;
}

export class RelayDeliveryLanes extends Construct {
  public readonly maxLanes: number;
  public readonly laneDeliveries: number;
  /** Whether fan-out may hand lanes to the worker (`maxLanes` above 1). */
  public readonly enabled: boolean;

  constructor(scope: Construct, id: string, props: RelayDeliveryLanesProps) {
    super(scope, id);
    const { fanout, worker } = props;
    this.maxLanes = props.maxLanes ?? DEFAULT_FANOUT_MAX_LANES;
    this.laneDeliveries = props.laneDeliveries ?? DEFAULT_FANOUT_LANE_DELIVERIES;
    if (!Number.isSafeInteger(this.maxLanes) || this.maxLanes < 1) throw new Error(`maxLanes must be a positive integer, got ${this.maxLanes}`);
    if (!Number.isSafeInteger(this.laneDeliveries) || this.laneDeliveries < 1) throw new Error(`laneDeliveries must be a positive integer, got ${this.laneDeliveries}`);
    this.enabled = this.maxLanes > 1;

    fanout.addEnvironment(FANOUT_VARIABLES.maxLanes, String(this.maxLanes));
    fanout.addEnvironment(FANOUT_VARIABLES.laneDeliveries, String(this.laneDeliveries));
    if (this.enabled) {
      fanout.addEnvironment(RELAY_VARIABLES.laneFunction, worker.functionName);
      fanout.addToRolePolicy(new PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: [worker.functionArn] }));
    }
    grantTableActions(worker, [{ table: props.connections, actions: LANE_WORKER_CONNECTIONS_ACTIONS }]);
  }
}
