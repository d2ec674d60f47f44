/**
 * Where every alarm goes. Without `-c alarmTopicArn` the stack creates its own SNS topic
 * (encrypted with a key of its own, TLS-only), optionally with an e-mail subscription
 * (`-c alarmEmail`), so no alarm of a fresh deployment fires into nothing. Every
 * AWS::CloudWatch::Alarm of the stack notifies it on ALARM and on OK, added by an aspect so an
 * alarm added later by any construct is covered too.
 *
 * The key is a customer managed one: CloudWatch cannot publish to a topic encrypted with the AWS
 * managed key `alias/aws/sns`, whose policy cannot be changed to let it use the key (Amazon SNS
 * Developer Guide, "Encryption at rest": CloudWatch alarms need a customer managed key).
 */
import { Aspects, Stack } from 'aws-cdk-lib';
import type { RemovalPolicy } from 'aws-cdk-lib';
import type { IAspect } from 'aws-cdk-lib';
import { Alarm } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import { Topic } from 'aws-cdk-lib/aws-sns';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import { Construct } from 'constructs';
import type { IConstruct } from 'constructs';

export interface RelayAlarmTopicProps {
  /** A topic of the operator's own; none: the stack creates one. */
  topicArn?: string;
  /** Subscribed to the topic by e-mail (SNS first sends a confirmation link). */
  email?: string;
  /** For the topic's key (`-c removalPolicy`), as for every other key of the stack. */
  removalPolicy: RemovalPolicy;
}

export class RelayAlarmTopic extends Construct {
  public readonly topic: ITopic;
  /** The key of the created topic; absent for a given one. */
  public readonly key?: Key;
  /**
   * Who the alarms reach, for the deploy output: a created topic without `-c alarmEmail` has no
   * subscriber, and every alarm then notifies nobody, which must be said where the deploy shows it.
   */
  public readonly subscribers: string;

  constructor(scope: Construct, id: string, props: RelayAlarmTopicProps) {
    super(scope, id);
    if (props.topicArn !== undefined) {
      this.topic = Topic.fromTopicArn(this, 'Topic', props.topicArn);
    } else {
      this.key = new Key(this, 'Key', { description: 'AEP relay: encrypts the alarm topic', enableKeyRotation: true, removalPolicy: props.removalPolicy });
      // CloudWatch publishes alarm notifications to the encrypted topic (SNS Developer Guide,
      // "Enable compatibility between event sources from AWS services and encrypted topics").
      this.key.addToResourcePolicy(new PolicyStatement({
        principals: [new ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
        resources: ['*'],
        conditions: { StringEquals: { 'aws:SourceAccount': Stack.of(this).account } },
      }));
      const topic = new Topic(this, 'Topic', { displayName: 'AEP relay alarms', masterKey: this.key, enforceSSL: true });
      topic.addToResourcePolicy(new PolicyStatement({
        principals: [new ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['sns:Publish'],
        resources: [topic.topicArn],
        conditions: { StringEquals: { 'aws:SourceAccount': Stack.of(this).account } },
      }));
      this.topic = topic;
    }
    if (props.email !== undefined) this.topic.addSubscription(new EmailSubscription(props.email));
    this.subscribers = subscribersOf(props);
  }

  /** Makes every alarm under `scope` notify the topic on ALARM and OK. */
  notifyEveryAlarm(scope: IConstruct): void {
    Aspects.of(scope).add(new AlarmNotifications(this.topic));
  }
}

/** NONE first when nobody is subscribed, so the line stands out in the deploy's outputs. */
export function subscribersOf(props: Pick<RelayAlarmTopicProps, 'topicArn' | 'email'>): string {
  if (props.email !== undefined) {
    return `${props.email} by e-mail, once the address confirms the link SNS sends it (until then nothing is delivered)`;
  }
  if (props.topicArn !== undefined) return 'the subscribers of the topic given with -c alarmTopicArn (this stack subscribes none)';
  return 'NONE: the alarm topic has no subscriber, so no alarm reaches anyone; deploy with -c alarmEmail=<address>, or subscribe to AlarmTopicArn';
}

class AlarmNotifications implements IAspect {
  private readonly action: SnsAction;
  private readonly done = new WeakSet<Alarm>();

  constructor(topic: ITopic) {
    this.action = new SnsAction(topic);
  }

  visit(node: IConstruct): void {
    if (!(node instanceof Alarm) || this.done.has(node)) return;
    this.done.add(node);
    node.addAlarmAction(this.action);
    node.addOkAction(this.action);
  }
}
