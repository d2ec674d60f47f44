/**
 * The tenant console in AWS: its built files in a private S3 bucket, served under
 * `/console/` by the relay's own CloudFront distribution through origin access control
 * (the bucket grants `s3:GetObject` to this distribution alone, and blocks every public
 * access), so the console shares the relay's one base URL and needs no CORS.
 *
 * The files are uploaded by BucketDeployments (keys under `console/`, the path CloudFront
 * forwards), with a Cache-Control per kind of file.
 */
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import {
  AllowedMethods,
  CachePolicy,
  Function as EdgeFunction,
  FunctionCode,
  FunctionEventType,
  FunctionRuntime,
  HeadersFrameOption,
  HeadersReferrerPolicy,
  ResponseHeadersPolicy,
  S3OriginAccessControl,
  ViewerProtocolPolicy,
} from 'aws-cdk-lib/aws-cloudfront';
import type { BehaviorOptions, Distribution } from 'aws-cdk-lib/aws-cloudfront';
import { S3BucketOrigin } from 'aws-cdk-lib/aws-cloudfront-origins';
import { BlockPublicAccess, Bucket, BucketEncryption, ObjectOwnership } from 'aws-cdk-lib/aws-s3';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { BucketDeployment, CacheControl, Source } from 'aws-cdk-lib/aws-s3-deployment';
import { Construct } from 'constructs';
import { CLOUDFRONT_NAME_LENGTHS, accountUniqueName } from './account-unique-name.ts';
import { consoleContentSecurityPolicy, CONSOLE_INDEX_REWRITE_CODE, CONSOLE_PATH } from './console-site.ts';

/** The id BucketDeployment gives the AWS CLI layer it makes for its handler (aws-cdk-lib 2.276). */
const UNUSED_CLI_LAYER_ID = 'AwsCliLayer';

export interface ConsoleBucketProps {
  /** The relay's distribution; the console's behaviours are added to it. */
  distribution: Distribution;
  /** The built console (`npm run build`: console/dist). */
  assetDir: string;
  removalPolicy: RemovalPolicy;
  /** Retention of the upload function's log group. */
  logRetention: RetentionDays;
  /**
   * The distribution's custom domain, when it has one: the CSP names `wss://` of it for the
   * socket. The default `*.cloudfront.net` name cannot be named (the policy would depend on
   * the distribution that depends on it), so there `'self'` alone covers the socket.
   */
  domainName?: string;
}

/** Files under fixed names that change with a deploy: the page, the web app manifest and the service worker (which a browser checks for updates by refetching). */
const ALWAYS_FRESH = ['index.html', 'manifest.webmanifest', 'sw.js'] as const;

export class ConsoleBucket extends Construct {
  public readonly bucket: Bucket;
  public readonly indexRewrite: EdgeFunction;
  public readonly responseHeaders: ResponseHeadersPolicy;
  public readonly originAccessControl: S3OriginAccessControl;
  public readonly deployment: BucketDeployment;
  public readonly pageDeployment: BucketDeployment;
  /** The upload function's log group. */
  public readonly uploadLogs: LogGroup;

  constructor(scope: Construct, id: string, props: ConsoleBucketProps) {
    super(scope, id);
    const destroy = props.removalPolicy === RemovalPolicy.DESTROY;
    this.bucket = new Bucket(this, 'Files', {
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      encryption: BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      versioned: false,
      removalPolicy: props.removalPolicy,
      // Only built files live here; a destroyed stack takes them along.
      autoDeleteObjects: destroy,
    });
    this.indexRewrite = new EdgeFunction(this, 'IndexRewrite', {
      comment: 'AEP relay console: folder paths to index.html',
      code: FunctionCode.fromInline(CONSOLE_INDEX_REWRITE_CODE),
      runtime: FunctionRuntime.JS_2_0,
    });
    this.responseHeaders = new ResponseHeadersPolicy(this, 'Headers', {
      responseHeadersPolicyName: accountUniqueName(this, 'Headers', CLOUDFRONT_NAME_LENGTHS.responseHeadersPolicy),
      comment: "AEP relay console: the relay's origin only, no framing, no referrer",
      securityHeadersBehavior: {
        contentSecurityPolicy: { contentSecurityPolicy: consoleContentSecurityPolicy(props.domainName === undefined ? [] : [`wss://${props.domainName}`]), override: true },
        contentTypeOptions: { override: true },
        frameOptions: { frameOption: HeadersFrameOption.DENY, override: true },
        referrerPolicy: { referrerPolicy: HeadersReferrerPolicy.NO_REFERRER, override: true },
        strictTransportSecurity: { accessControlMaxAge: Duration.days(365), includeSubdomains: true, override: true },
      },
    });
    this.originAccessControl = new S3OriginAccessControl(this, 'FilesAccessControl', {
      originAccessControlName: accountUniqueName(this, 'FilesAccessControl', CLOUDFRONT_NAME_LENGTHS.originAccessControl),
      description: 'Signs CloudFront requests to the AEP relay console bucket',
    });
    const behaviour: BehaviorOptions = {
      // Grants this distribution (and only it) s3:GetObject through the bucket policy.
      origin: S3BucketOrigin.withOriginAccessControl(this.bucket, { originAccessControl: this.originAccessControl }),
      allowedMethods: AllowedMethods.ALLOW_GET_HEAD,
      // A static page carries no token: redirecting http:// to https:// is safe here.
      viewerProtocolPolicy: ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
      cachePolicy: CachePolicy.CACHING_OPTIMIZED,
      responseHeadersPolicy: this.responseHeaders,
      compress: true,
      functionAssociations: [{ function: this.indexRewrite, eventType: FunctionEventType.VIEWER_REQUEST }],
    };
    props.distribution.addBehavior(CONSOLE_PATH, behaviour.origin, behaviour);
    props.distribution.addBehavior(`${CONSOLE_PATH}/*`, behaviour.origin, behaviour);
    // Two uploads so each file gets the right Cache-Control: the page is revalidated on every
    // load (a deploy shows at once, with no invalidation and so no cloudfront:* grant), the
    // assets carry a content hash in their names and never change.
    const source = Source.asset(props.assetDir);
    // Both uploads run in one function (BucketDeployment's singleton handler), which logs here
    // with the stack's retention instead of into a log group Lambda would create without one.
    this.uploadLogs = new LogGroup(this, 'UploadLogs', { retention: props.logRetention, removalPolicy: props.removalPolicy });
    const destination = { destinationBucket: this.bucket, destinationKeyPrefix: `${CONSOLE_PATH.slice(1)}/`, prune: true, logGroup: this.uploadLogs };
    this.deployment = new BucketDeployment(this, 'UploadAssets', {
      ...destination,
      sources: [source],
      exclude: [...ALWAYS_FRESH],
      cacheControl: [CacheControl.setPublic(), CacheControl.maxAge(Duration.days(365)), CacheControl.immutable()],
    });
    this.pageDeployment = new BucketDeployment(this, 'UploadPage', {
      ...destination,
      sources: [source],
      exclude: ['*'],
      include: [...ALWAYS_FRESH],
      cacheControl: [CacheControl.noCache()],
    });
    // Each BucketDeployment makes an AWS CLI layer version (a 22 MB asset) for the handler, but the
    // handler is one function, built by the first deployment with the first layer: the second
    // layer version would be published on every deploy and used by nothing.
    this.pageDeployment.node.tryRemoveChild(UNUSED_CLI_LAYER_ID);
  }
}
