/**
 * Alarms and a dashboard for what breaks a relay in production: fan-out falling behind or
 * failing (events stored but not delivered live), 5xx from the HTTP API and failed WebSocket
 * routes, DynamoDB throttling, Lambda throttling. Only what an operator must act on alarms:
 * refusals the relay makes on purpose (401, 429) do not. Every alarm notifies the alarm topic on ALARM and on OK (alarm-topic.ts).
 *
 * The relay's own metrics (the handlers' embedded metrics and the log metric filters) live in a
 * namespace per stage, `AepRelay/{stage}`: two stages in one account share no series, so a dev
 * stack's failures never set off prod's alarms.
 */
import { Duration } from 'aws-cdk-lib';
import type { IHttpApi, IWebSocketStage } from 'aws-cdk-lib/aws-apigatewayv2';
import { Alarm, AlarmStatusWidget, ComparisonOperator, Dashboard, GraphWidget, MathExpression, Stats, TextWidget, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import type { IMetric } from 'aws-cdk-lib/aws-cloudwatch';
import { Operation } from 'aws-cdk-lib/aws-dynamodb';
import type { Table } from 'aws-cdk-lib/aws-dynamodb';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { FilterPattern, MetricFilter } from 'aws-cdk-lib/aws-logs';
import type { ILogGroup } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { DEFAULT_METRICS_NAMESPACE } from '../../src/config/relay-config.ts';

/** The namespace of one stage's own metrics (log metric filters, and the handlers' embedded metrics, `AEP_METRICS_NAMESPACE`). */
export function relayMetricsNamespace(stage: string): string {
  return `${DEFAULT_METRICS_NAMESPACE}/${stage}`;
}

/** The message the socket function logs when a route fails (functions/socket/handler.ts). */
export const SOCKET_ROUTE_FAILED_MESSAGE = 'socket route failed';

/** Fan-out is behind when its oldest record waits longer than this. */
export const ITERATOR_AGE_THRESHOLD = Duration.seconds(60);

/** The DynamoDB operations the relay's stores issue (src/store/*), whose throttles are watched. */
const TABLE_OPERATIONS = [
  Operation.GET_ITEM,
  Operation.PUT_ITEM,
  Operation.UPDATE_ITEM,
  Operation.DELETE_ITEM,
  Operation.QUERY,
  Operation.BATCH_WRITE_ITEM,
  Operation.TRANSACT_WRITE_ITEMS,
];

const FIVE_MINUTES = Duration.minutes(5);

/**
 * The handlers' per-tenant counts (src/relay/ports/metrics.ts, published as embedded metrics
 * with the dimension `tenant`, and `code` for refusals): one series per tenant, found by a
 * SEARCH so a tenant created after deployment appears without a redeploy.
 */
export const TENANT_METRIC_WIDGETS: ReadonlyArray<{ title: string; metrics: readonly string[]; byCode?: boolean }> = [
  { title: 'Events admitted per tenant', metrics: ['EventsAdmitted'] },
  { title: 'Events refused per tenant and code', metrics: ['EventsRefused'], byCode: true },
  { title: 'Deliveries per tenant', metrics: ['Deliveries'] },
  { title: 'Backpressure disconnects per tenant', metrics: ['BackpressureDisconnects'] },
  { title: 'Sockets and streams opened / closed per tenant', metrics: ['SocketsOpened', 'SocketsClosed', 'StreamsOpened', 'StreamsClosed'] },
  { title: 'Commands routed per tenant', metrics: ['CommandsRouted'] },
  { title: 'Commands refused per tenant and code', metrics: ['CommandsRefused'], byCode: true },
];

/** `SEARCH('{AepRelay/prod,tenant} MetricName="EventsAdmitted"', 'Sum', 300)` and the like. */
export function tenantSearchExpression(namespace: string, metrics: readonly string[], byCode = false): string {
  const names = metrics.map((name) => `MetricName="${name}"`).join(' OR ');
  const schema = byCode ? `{${namespace},tenant,code}` : `{${namespace},tenant}`;
  return `SEARCH('${schema} ${metrics.length > 1 ? `(${names})` : names}', 'Sum', ${FIVE_MINUTES.toSeconds()})`;
}

export interface RelayObservabilityProps {
  /** Functions by name, for throttles and errors. */
  functions: Readonly<Record<string, IFunction>>;
  /** The stream consumer, for iterator age. */
  fanout: IFunction;
  /** Stream batches fan-out gave up on (retries spent, or past the record age), archived with their records. */
  failedBatches: IMetric;
  httpApi: IHttpApi;
  webSocketStage: IWebSocketStage;
  /** Tables by name. */
  tables: Readonly<Record<string, Table>>;
  /** The socket function's log group, where its route failures are counted. */
  socketLogGroup: ILogGroup;
  /** This stage's namespace (`relayMetricsNamespace`). */
  metricsNamespace: string;
  dashboardName?: string;
}

export class RelayObservability extends Construct {
  public readonly alarms: Alarm[] = [];
  public readonly dashboard: Dashboard;

  constructor(scope: Construct, id: string, props: RelayObservabilityProps) {
    super(scope, id);
    const alarm = (alarmId: string, description: string, metric: IMetric, threshold: number, operator = ComparisonOperator.GREATER_THAN_THRESHOLD, evaluationPeriods = 1): Alarm => {
      const created = new Alarm(this, alarmId, {
        alarmDescription: description,
        metric,
        threshold,
        comparisonOperator: operator,
        evaluationPeriods,
        // No data means no invocations, no requests, no records: nothing wrong.
        treatMissingData: TreatMissingData.NOT_BREACHING,
      });
      this.alarms.push(created);
      return created;
    };

    // Fan-out: each of these means events were stored but not delivered live.
    alarm('FanoutErrors', 'The fan-out function failed (batches are retried, then archived in the failed-batch bucket).', props.fanout.metricErrors({ period: FIVE_MINUTES, statistic: Stats.SUM }), 0);
    const iteratorAge = props.fanout.metric('IteratorAge', { period: Duration.minutes(1), statistic: Stats.MAXIMUM });
    alarm('FanoutIteratorAge', `Fan-out is more than ${ITERATOR_AGE_THRESHOLD.toSeconds()} s behind the event log stream.`, iteratorAge, ITERATOR_AGE_THRESHOLD.toMilliseconds(), ComparisonOperator.GREATER_THAN_THRESHOLD, 3);
    const parked = props.failedBatches;
    alarm('FanoutFailedRecords', 'Stream batches failed every fan-out retry (or outgrew the record age) and were archived in the failed-batch bucket.', parked, 0);

    // APIs.
    alarm('HttpApi5xx', 'The HTTP API answered 5xx.', props.httpApi.metricServerError({ period: FIVE_MINUTES, statistic: Stats.SUM }), 0);
    // WebSocket APIs publish IntegrationError (the integration answered 4xx/5xx) and
    // ExecutionError (API Gateway failed to call it); there is no 5xx metric for them
    // (API Gateway Developer Guide, "Monitor WebSocket API execution with CloudWatch metrics").
    const socketIntegrationErrors = props.webSocketStage.metric('IntegrationError', { period: FIVE_MINUTES, statistic: Stats.SUM });
    const socketExecutionErrors = props.webSocketStage.metric('ExecutionError', { period: FIVE_MINUTES, statistic: Stats.SUM });
    // No alarm on IntegrationError: it also counts the deliberate refusals at $connect (429 at
    // the tenant's connection quota, 401 without authorizer context), which need no operator.
    // What does is a route that failed: the socket function answers those 500 after logging
    // `socket route failed` (functions/socket/handler.ts), counted here from its log group.
    const socketRouteFailures = new MetricFilter(this, 'SocketRouteFailureFilter', {
      logGroup: props.socketLogGroup,
      filterPattern: FilterPattern.stringValue('$.message', '=', SOCKET_ROUTE_FAILED_MESSAGE),
      metricNamespace: props.metricsNamespace,
      metricName: 'SocketRouteFailures',
      metricValue: '1',
    }).metric({ period: FIVE_MINUTES, statistic: Stats.SUM });
    alarm('SocketRouteFailures', 'A WebSocket route failed in the socket function (answered 500); deliberate refusals are not counted.', socketRouteFailures, 0);
    alarm('WebSocketExecutionErrors', 'API Gateway failed to invoke a WebSocket route integration.', socketExecutionErrors, 0);

    // DynamoDB: throttled requests per table, over the operations the stores issue. One
    // widget per table: the per-operation expressions of different tables share metric ids.
    const throttleWidgets: GraphWidget[] = [];
    for (const [name, table] of Object.entries(props.tables)) {
      const throttled = table.metricThrottledRequestsForOperations({ operations: TABLE_OPERATIONS, period: FIVE_MINUTES, label: `${name} throttled requests` });
      alarm(`${name}TableThrottles`, `DynamoDB throttled requests to the ${name} table.`, throttled, 0);
      throttleWidgets.push(new GraphWidget({ title: `DynamoDB ${name}: throttled requests`, width: 8, left: [throttled] }));
    }
    // No alarm (and no graph) on AWS/DynamoDB UserErrors: it has no TableName dimension, it is
    // every 400 of every DynamoDB and Streams caller in the account and region (DynamoDB
    // Developer Guide, "DynamoDB metrics"), so another stack's mistakes would page this one's
    // operator and a second stage would alarm on the same series. The relay's own failed calls
    // show as function errors and as its handlers' logs.

    // Lambda: throttles and errors per function.
    for (const [name, fn] of Object.entries(props.functions)) {
      alarm(`${name}Throttles`, `Lambda throttled the ${name} function (concurrency limit).`, fn.metricThrottles({ period: FIVE_MINUTES, statistic: Stats.SUM }), 0);
      if (fn !== props.fanout) alarm(`${name}Errors`, `The ${name} function failed (unhandled error or timeout).`, fn.metricErrors({ period: FIVE_MINUTES, statistic: Stats.SUM }), 0);
    }

    const functions = Object.entries(props.functions);
    const perFunction = (title: string, metric: (fn: IFunction, label: string) => IMetric): GraphWidget =>
      new GraphWidget({ title, width: 8, left: functions.map(([name, fn]) => metric(fn, name)) });
    this.dashboard = new Dashboard(this, 'Dashboard', {
      ...(props.dashboardName === undefined ? {} : { dashboardName: props.dashboardName }),
      widgets: [
        [new TextWidget({ markdown: '# AEP relay\nFan-out, APIs, tables and functions. Alarms below.', width: 24, height: 2 })],
        [new AlarmStatusWidget({ title: 'Alarms', alarms: this.alarms, width: 24 })],
        [
          new GraphWidget({ title: 'Fan-out iterator age (max, ms)', width: 8, left: [iteratorAge], leftAnnotations: [{ value: ITERATOR_AGE_THRESHOLD.toMilliseconds(), label: 'alarm' }] }),
          new GraphWidget({ title: 'Fan-out errors / failed records', width: 8, left: [props.fanout.metricErrors({ period: FIVE_MINUTES })], right: [parked] }),
          new GraphWidget({ title: 'Fan-out invocations and duration', width: 8, left: [props.fanout.metricInvocations({ period: FIVE_MINUTES })], right: [props.fanout.metricDuration({ period: FIVE_MINUTES, statistic: Stats.p(99) })] }),
        ],
        [
          new GraphWidget({
            title: 'HTTP API requests / 4xx / 5xx',
            width: 12,
            left: [props.httpApi.metricCount({ period: FIVE_MINUTES }), props.httpApi.metricClientError({ period: FIVE_MINUTES }), props.httpApi.metricServerError({ period: FIVE_MINUTES })],
            right: [props.httpApi.metricLatency({ period: FIVE_MINUTES, statistic: Stats.p(99) })],
          }),
          new GraphWidget({
            title: 'WebSocket connects / messages / errors',
            width: 12,
            left: [
              props.webSocketStage.metric('ConnectCount', { period: FIVE_MINUTES, statistic: Stats.SUM }),
              props.webSocketStage.metric('MessageCount', { period: FIVE_MINUTES, statistic: Stats.SUM }),
            ],
            right: [socketIntegrationErrors, socketRouteFailures, socketExecutionErrors],
          }),
        ],
        throttleWidgets,
        [
          new GraphWidget({
            title: 'DynamoDB consumed capacity (RCU left, WCU right)',
            width: 24,
            left: Object.entries(props.tables).map(([name, table]) => table.metricConsumedReadCapacityUnits({ period: FIVE_MINUTES, label: `${name} RCU` })),
            right: Object.entries(props.tables).map(([name, table]) => table.metricConsumedWriteCapacityUnits({ period: FIVE_MINUTES, label: `${name} WCU` })),
          }),
        ],
        [
          perFunction('Lambda invocations', (fn, label) => fn.metricInvocations({ period: FIVE_MINUTES, label })),
          perFunction('Lambda errors', (fn, label) => fn.metricErrors({ period: FIVE_MINUTES, label })),
          perFunction('Lambda throttles', (fn, label) => fn.metricThrottles({ period: FIVE_MINUTES, label })),
        ],
        [new TextWidget({ markdown: `## Per tenant\nThe handlers' embedded metrics (namespace \`${props.metricsNamespace}\`, dimension \`tenant\`; refusals also by \`code\`).`, width: 24, height: 2 })],
        TENANT_METRIC_WIDGETS.slice(0, 4).map((widget) => tenantWidget(props.metricsNamespace, widget, 6)),
        TENANT_METRIC_WIDGETS.slice(4).map((widget) => tenantWidget(props.metricsNamespace, widget, 8)),
      ],
    });
  }
}

function tenantWidget(namespace: string, widget: (typeof TENANT_METRIC_WIDGETS)[number], width: number): GraphWidget {
  const search = new MathExpression({ expression: tenantSearchExpression(namespace, widget.metrics, widget.byCode), usingMetrics: {}, period: FIVE_MINUTES });
  return new GraphWidget({ title: widget.title, width, left: [search] });
}
