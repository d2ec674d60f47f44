/**
 * The origin secret (src/auth/origin-verify.ts): a value Secrets Manager generates per stack,
 * which CloudFront sends as an origin custom header to the HTTP and WebSocket APIs and the
 * functions behind them accept.
 *
 * Both sides take it as a CloudFormation dynamic reference (`{{resolve:secretsmanager:…}}`,
 * usable in every resource property, CloudFormation User Guide, "Get a secret or secret value
 * from Secrets Manager"), resolved at deploy. The functions get it in their environment rather
 * than reading Secrets Manager at cold start: no GetSecretValue call (and its latency) on the
 * authorizer's cold path, no IAM grant, no cache to refresh. The value is then visible to whoever
 * may read the function's configuration, as it is anyway to whoever may read the distribution's
 * (origin custom headers are part of it); it keeps out callers on the internet, not principals
 * of the account.
 *
 * CloudFormation re-resolves a dynamic reference only when the reference's own text changes (not
 * when the secret does), so a rotation is a new value (`put-secret-value`, which makes the old
 * one AWSPREVIOUS) and a deploy with `-c originSecretRotation=true`: CloudFront's reference names
 * AWSCURRENT explicitly (new text: re-resolved to the new value) and the functions accept
 * AWSCURRENT and AWSPREVIOUS while the distribution change reaches every edge location; a plain
 * deploy afterwards accepts the new value only (docs/deploy-and-upgrade.md "Rotating the origin secret").
 */
import { RemovalPolicy, SecretValue } from 'aws-cdk-lib';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';

export interface RelayOriginSecretProps {
  /** The deploy between a `put-secret-value` and the next: accept the previous value too. */
  rotation: boolean;
}

export class RelayOriginSecret extends Construct {
  public readonly secret: Secret;
  /** What CloudFront sends (a dynamic reference). */
  public readonly headerValue: string;
  /** What the functions accept (dynamic references): the current value, and during a rotation the previous one. */
  public readonly acceptedValues: readonly string[];

  constructor(scope: Construct, id: string, props: RelayOriginSecretProps) {
    super(scope, id);
    this.secret = new Secret(this, 'Secret', {
      description: 'AEP relay: the header value CloudFront adds to requests for the HTTP and WebSocket APIs, which refuse requests without it',
      // Letters and digits only: a header value, and a comma-separated list in the functions' environment.
      generateSecretString: { passwordLength: 48, excludePunctuation: true, includeSpace: false },
      // Nothing depends on a value past its stack: a new stack generates its own.
      removalPolicy: RemovalPolicy.DESTROY,
    });
    const reference = (versionStage?: 'AWSCURRENT' | 'AWSPREVIOUS'): string =>
      SecretValue.secretsManager(this.secret.secretArn, versionStage === undefined ? {} : { versionStage }).unsafeUnwrap();
    this.headerValue = props.rotation ? reference('AWSCURRENT') : reference();
    this.acceptedValues = props.rotation ? [reference('AWSCURRENT'), reference('AWSPREVIOUS')] : [reference()];
  }
}
