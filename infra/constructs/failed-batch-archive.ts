/**
 * Where a DynamoDB stream event source mapping puts the batches it gives up on (retries spent,
 * or older than the mapping's maximum record age): a private S3 bucket. An SQS or SNS
 * destination receives only the batch's coordinates (shard, sequence numbers), which point into
 * a stream that keeps records 24 h; an S3 destination also receives "the entire invocation
 * record along with the metadata" (Lambda Developer Guide, "Retain discarded records for a
 * DynamoDB event source in Lambda"), so the discarded records themselves (their new images:
 * the stored events) stay readable until the bucket's expiry, with no tool of ours in between.
 *
 * Not CDK's `S3OnFailureDestination`: it grants the function `grantReadWrite` on the bucket
 * (reads, deletes, tagging); the documented need is `s3:PutObject` and `s3:ListBucket`, which
 * is all this grants (SSE-S3 needs no KMS permission).
 */
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { Metric, Stats } from 'aws-cdk-lib/aws-cloudwatch';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { DlqDestinationConfig, IEventSourceDlq, IEventSourceMapping, IFunction } from 'aws-cdk-lib/aws-lambda';
import { BlockPublicAccess, Bucket, BucketEncryption, ObjectOwnership } from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';

/** How long a failed batch is kept: long enough to notice, read and redrive it; the events themselves stay in the log for its retention. */
export const FAILED_BATCH_EXPIRY = Duration.days(14);

/** The id of the bucket's request-metrics filter (the whole bucket), a dimension of its `PutRequests` metric. */
export const FAILED_BATCH_METRICS_ID = 'FailedBatches';

export interface FailedBatchArchiveProps {
  /** The stack's removal policy (docs/operations.md "Settings": `-c removalPolicy`). */
  removalPolicy: RemovalPolicy;
}

export class FailedBatchArchive extends Construct implements IEventSourceDlq {
  public readonly bucket: Bucket;

  constructor(scope: Construct, id: string, props: FailedBatchArchiveProps) {
    super(scope, id);
    const destroy = props.removalPolicy === RemovalPolicy.DESTROY;
    this.bucket = new Bucket(this, 'Bucket', {
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      encryption: BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      versioned: false,
      lifecycleRules: [{ id: 'ExpireFailedBatches', expiration: FAILED_BATCH_EXPIRY, abortIncompleteMultipartUploadAfter: Duration.days(1) }],
      // Request metrics (PutRequests) are what the alarm on this archive counts.
      metrics: [{ id: FAILED_BATCH_METRICS_ID }],
      removalPolicy: props.removalPolicy,
      // A destroyed stack takes its failure records along, as it takes the tables.
      autoDeleteObjects: destroy,
    });
  }

  /** Called by the event source mapping: its function may write failure records here, and nothing more. */
  bind(_target: IEventSourceMapping, targetHandler: IFunction): DlqDestinationConfig {
    targetHandler.addToRolePolicy(new PolicyStatement({ actions: ['s3:PutObject'], resources: [this.bucket.arnForObjects('*')] }));
    targetHandler.addToRolePolicy(new PolicyStatement({ actions: ['s3:ListBucket'], resources: [this.bucket.bucketArn] }));
    return { destination: this.bucket.bucketArn };
  }

  /**
   * Failure records written (S3 request metric `PutRequests` of the whole-bucket filter). S3
   * delivers request metrics on a best-effort basis (S3 User Guide, "Metrics and dimensions"):
   * the archive itself is the complete account.
   */
  metricFailedBatches(period = Duration.minutes(5)): Metric {
    return new Metric({
      namespace: 'AWS/S3',
      metricName: 'PutRequests',
      dimensionsMap: { BucketName: this.bucket.bucketName, FilterId: FAILED_BATCH_METRICS_ID },
      statistic: Stats.SUM,
      period,
    });
  }
}
