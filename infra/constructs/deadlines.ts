/**
 * Connection deadlines in AWS (README "Connection deadlines"): an EventBridge rule invokes the
 * deadline function every minute for the sweep (`src/relay/deadline-sweep.ts`), and the socket
 * function invokes it for a deadline nearer than the sweep's horizon. Bounded: a reserved
 * concurrency (the sweeps' overlap and the near deadlines share it; Lambda retries throttled
 * asynchronous events), no invocation longer than the horizon plus a margin, and whatever still
 * fails (a sweep, a near deadline, or an event EventBridge could not deliver) lands in one
 * encrypted queue with an alarm. The deadlines themselves are in the index; the next sweep
 * takes whatever a failed invocation left.
 */
import { Duration } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction as LambdaTarget } from 'aws-cdk-lib/aws-events-targets';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import { SqsDestination } from 'aws-cdk-lib/aws-lambda-destinations';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';

/** How often the sweep runs: EventBridge rules' finest rate, and half the sweep's horizon. */
export const DEADLINE_SWEEP_RATE = Duration.minutes(1);
/**
 * No reservation (a new account's reduced quota could not make one, infra/reserved-concurrency.ts):
 * the function's concurrency is bounded by what invokes it, not by a cap. A sweep lasts up to
 * its horizon (2 min) and one starts every minute, so two or three overlap; besides those, only
 * a connection whose deadline falls within 2 minutes of its `$connect` gets an invocation, and
 * that one ends at the deadline.
 */
/** Retries of a failed asynchronous invocation (Lambda's own, and EventBridge's delivery). */
export const DEADLINE_RETRY_ATTEMPTS = 2;
/** An invocation event older than this is dropped to the failure queue: the next sweep has it covered. */
export const DEADLINE_MAX_EVENT_AGE = Duration.minutes(15);

export interface RelayDeadlinesProps {
  /** functions/deadline. */
  handler: LambdaFunction;
}

export class RelayDeadlines extends Construct {
  public readonly sweep: Rule;
  /** Sweeps and near deadlines that failed every attempt, and events EventBridge could not deliver. */
  public readonly failures: Queue;
  public readonly failuresAlarm: Alarm;

  constructor(scope: Construct, id: string, props: RelayDeadlinesProps) {
    super(scope, id);
    const { handler } = props;
    this.failures = new Queue(this, 'Failures', { encryption: QueueEncryption.SQS_MANAGED, enforceSSL: true, retentionPeriod: Duration.days(14) });
    handler.configureAsyncInvoke({ retryAttempts: DEADLINE_RETRY_ATTEMPTS, maxEventAge: DEADLINE_MAX_EVENT_AGE, onFailure: new SqsDestination(this.failures) });
    this.sweep = new Rule(this, 'Sweep', {
      description: 'AEP relay: sweeps connection deadlines (closes connections whose token expires)',
      schedule: Schedule.rate(DEADLINE_SWEEP_RATE),
      targets: [new LambdaTarget(handler, { retryAttempts: DEADLINE_RETRY_ATTEMPTS, maxEventAge: DEADLINE_MAX_EVENT_AGE, deadLetterQueue: this.failures })],
    });
    this.failuresAlarm = new Alarm(this, 'FailuresAlarm', {
      alarmDescription: 'Connection deadline invocations failed every attempt (their deadlines stay in the index; the next sweep retries them): see the deadline function logs',
      metric: this.failures.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(5) }),
      threshold: 0,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
  }
}
