/**
 * The seed of the relay's VAPID key pair (Web Push, RFC 8292; `src/gateway/vapid-keys.ts`
 * derives the key from it): a value Secrets Manager generates at the first deploy, so no key is
 * ever in the repository, a template or a deploy machine.
 *
 * Like the origin secret (`origin-secret.ts`), the functions take it as a CloudFormation dynamic
 * reference resolved at deploy (no GetSecretValue call on a cold start, no IAM grant); the value
 * is then readable by whoever may read those functions' configuration. Only the functions that
 * sign (bridges, sink-retry) or publish the public half (http) get it.
 *
 * Rotation (docs/web-push.md): `put-secret-value` with a new random value, then a deploy with
 * `-c vapidRotation=true`: the functions sign with AWSCURRENT and still hold AWSPREVIOUS, so a
 * browser subscribed under the old key keeps receiving until its console subscribes again
 * under the new one (the console does at its next start); a plain deploy later drops the old
 * key, and subscriptions still under it are removed at their next message.
 */
import { SecretValue } from 'aws-cdk-lib';
import type { RemovalPolicy } from 'aws-cdk-lib';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import { PUSH_VARIABLES } from '../../src/config/relay-environment.ts';

export interface RelayVapidSecretProps {
  /** The deploy after a `put-secret-value`: keep the previous seed too. */
  rotation: boolean;
  /** The VAPID contact push services may write to (`mailto:` or `https:`). @default the relay's placeholder (`push-config.ts`) */
  contact?: string;
  /** Goes with the tenants table: a new seed orphans every browser subscription. */
  removalPolicy: RemovalPolicy;
}

export class RelayVapidSecret extends Construct {
  public readonly secret: Secret;
  private readonly props: RelayVapidSecretProps;

  constructor(scope: Construct, id: string, props: RelayVapidSecretProps) {
    super(scope, id);
    this.props = props;
    this.secret = new Secret(this, 'Seed', {
      description: 'AEP relay: the seed of the VAPID key pair that signs Web Push notifications',
      generateSecretString: { passwordLength: 64, excludePunctuation: true, includeSpace: false },
      removalPolicy: props.removalPolicy,
    });
  }

  /** Gives a function the seed(s) and the contact, as environment variables. */
  useIn(fn: LambdaFunction): void {
    const reference = (versionStage?: 'AWSCURRENT' | 'AWSPREVIOUS'): string =>
      SecretValue.secretsManager(this.secret.secretArn, versionStage === undefined ? {} : { versionStage }).unsafeUnwrap();
    fn.addEnvironment(PUSH_VARIABLES.vapidSeed, this.props.rotation ? reference('AWSCURRENT') : reference());
    if (this.props.rotation) fn.addEnvironment(PUSH_VARIABLES.vapidPreviousSeed, reference('AWSPREVIOUS'));
    if (this.props.contact !== undefined) fn.addEnvironment(PUSH_VARIABLES.vapidSubject, this.props.contact);
  }
}
