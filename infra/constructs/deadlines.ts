/**
 * Connection deadlines in AWS (docs/operations.md "Connection deadlines"): an EventBridge rule invokes the
 * deadline function every minute for the sweep (`src/relay/deadline-sweep.ts`), and a deadline
 * nearer than the sweep's horizon is also queued by the socket function, delayed until it is due,
 * and delivered to the deadline function through an event source mapping
 * (`src/gateway/queued-deadlines.ts`). Bounded: the sweeps overlap two or three at a time, the
 * mapping runs at most `DEADLINE_QUEUE_CONCURRENCY` invocations, and none waits for a queued
 * deadline (it arrives when due); no reservation (a new account's reduced quota could not make
 * one, infra/reserved-concurrency.ts). No invocation runs longer than the horizon plus a margin, and
 * whatever still fails (a sweep, a message received too often, or an event EventBridge could not
 * deliver) lands in one encrypted queue with an alarm. The deadlines themselves are in the index;
 * the next sweep takes whatever a failed invocation left.
 */
import { Duration } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction as LambdaTarget } from 'aws-cdk-lib/aws-events-targets';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import { SqsDestination } from 'aws-cdk-lib/aws-lambda-destinations';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { DEADLINE_TIMEOUT_SECONDS } from '../../src/config/function-timeouts.ts';
import { RELAY_VARIABLES } from '../../src/config/relay-environment.ts';

/** How often the sweep runs: EventBridge rules' finest rate, and half the sweep's horizon. */
export const DEADLINE_SWEEP_RATE = Duration.minutes(1);
/** Retries of a failed asynchronous invocation (Lambda's own, and EventBridge's delivery). */
export const DEADLINE_RETRY_ATTEMPTS = 2;
/** An invocation event older than this is dropped to the failure queue: the next sweep has it covered. */
export const DEADLINE_MAX_EVENT_AGE = Duration.minutes(15);
/**
 * Invocations working the deadline queue at once (the mapping's maximum concurrency, Lambda's
 * minimum of 2). Each closes up to a batch of deadlines at once in a few tens of milliseconds, so
 * two keep up with hundreds of connections expiring a second; past that, deadlines close late,
 * but no more executions are taken from the account.
 */
export const DEADLINE_QUEUE_CONCURRENCY = 2;
/** Deadlines per invocation from the queue, closed concurrently. */
export const DEADLINE_QUEUE_BATCH_SIZE = 10;
/** AWS guidance for an SQS event source: a visibility timeout of at least six times the function's timeout. */
export const DEADLINE_QUEUE_VISIBILITY = Duration.seconds(6 * DEADLINE_TIMEOUT_SECONDS);
/** Receives of a deadline message (an invocation that crashed or timed out) before it goes to the failure queue. */
export const DEADLINE_QUEUE_MAX_RECEIVES = DEADLINE_RETRY_ATTEMPTS + 1;

export interface RelayDeadlinesProps {
  /** functions/deadline. */
  handler: LambdaFunction;
  /** functions/socket: sets deadlines (`$connect`, `hello`) and queues the near ones. */
  scheduler: LambdaFunction;
}

export class RelayDeadlines extends Construct {
  public readonly sweep: Rule;
  /** Near deadlines, each held until it is due. */
  public readonly queue: Queue;
  public readonly queueEventSource: SqsEventSource;
  /** Sweeps and queued deadlines that failed every attempt, and events EventBridge could not deliver. */
  public readonly failures: Queue;
  public readonly failuresAlarm: Alarm;

  constructor(scope: Construct, id: string, props: RelayDeadlinesProps) {
    super(scope, id);
    const { handler, scheduler } = props;
    this.failures = new Queue(this, 'Failures', { encryption: QueueEncryption.SQS_MANAGED, enforceSSL: true, retentionPeriod: Duration.days(14) });
    handler.configureAsyncInvoke({ retryAttempts: DEADLINE_RETRY_ATTEMPTS, maxEventAge: DEADLINE_MAX_EVENT_AGE, onFailure: new SqsDestination(this.failures) });
    this.sweep = new Rule(this, 'Sweep', {
      description: 'AEP relay: sweeps connection deadlines (closes connections whose token expires)',
      schedule: Schedule.rate(DEADLINE_SWEEP_RATE),
      targets: [new LambdaTarget(handler, { retryAttempts: DEADLINE_RETRY_ATTEMPTS, maxEventAge: DEADLINE_MAX_EVENT_AGE, deadLetterQueue: this.failures })],
    });

    this.queue = new Queue(this, 'Queue', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      visibilityTimeout: DEADLINE_QUEUE_VISIBILITY,
      // A deadline is at most the sweep's horizon away; one older than this is long past and swept.
      retentionPeriod: Duration.hours(1),
      deadLetterQueue: { queue: this.failures, maxReceiveCount: DEADLINE_QUEUE_MAX_RECEIVES },
    });
    scheduler.addEnvironment(RELAY_VARIABLES.deadlineQueueUrl, this.queue.queueUrl);
    // SendMessage only (grantSendMessages would add GetQueueAttributes and GetQueueUrl, which it never calls).
    scheduler.addToRolePolicy(new PolicyStatement({ actions: ['sqs:SendMessage'], resources: [this.queue.queueArn] }));
    this.queueEventSource = new SqsEventSource(this.queue, { batchSize: DEADLINE_QUEUE_BATCH_SIZE, maxConcurrency: DEADLINE_QUEUE_CONCURRENCY });
    handler.addEventSource(this.queueEventSource);

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
