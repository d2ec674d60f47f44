/**
 * CloudFront standard logging (v2) into a CloudWatch log group: a delivery source (the
 * distribution, log type ACCESS_LOGS), a delivery destination (the log group) and the delivery
 * between them, which names the fields each record keeps.
 *
 * The query string is left out (`cs-uri-query`): browsers send their token as `access_token` in
 * it (AEP-0003 §8.1). So are `cs(Referer)`, which can hold the query of the referring page, and
 * `cs(Cookie)`. Everything else of the standard fields is kept.
 *
 * CloudFront's log delivery API answers in us-east-1 only ("When calling the CloudWatch API to
 * enable standard logging, you must specify the US East (N. Virginia) Region", CloudFront
 * Developer Guide, "Configure standard logging (v2)"; elsewhere PutDeliverySource fails with
 * "not supported for this LogType in region"), so the resources carry a condition on the stack's
 * region: a stack in another region deploys without edge access logs (the HTTP API's access logs
 * and the functions' logs still record every request at its origin).
 */
import { Aws, CfnCondition, Fn, Names } from 'aws-cdk-lib';
import type { RemovalPolicy } from 'aws-cdk-lib';
import type { IDistribution } from 'aws-cdk-lib/aws-cloudfront';
import { CfnDelivery, CfnDeliveryDestination, CfnDeliverySource, CfnLogGroup, LogGroup } from 'aws-cdk-lib/aws-logs';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';

/** The region CloudFront's log delivery API is in. */
export const EDGE_LOG_DELIVERY_REGION = 'us-east-1';

/**
 * The standard log fields kept, in order (CloudFront Developer Guide, "Standard log file
 * fields"): every one but the query string (tokens travel there), the referrer and cookies.
 */
export const EDGE_LOG_FIELDS = [
  'date', 'time', 'x-edge-location', 'sc-bytes', 'c-ip', 'cs-method', 'cs(Host)', 'cs-uri-stem', 'sc-status',
  'cs(User-Agent)', 'x-edge-result-type', 'x-edge-request-id', 'x-host-header', 'cs-protocol', 'cs-bytes',
  'time-taken', 'x-forwarded-for', 'ssl-protocol', 'ssl-cipher', 'x-edge-response-result-type', 'cs-protocol-version',
  'c-port', 'time-to-first-byte', 'x-edge-detailed-result-type', 'sc-content-type', 'sc-content-len',
] as const;

export interface RelayEdgeAccessLogsProps {
  distribution: IDistribution;
  retention: RetentionDays;
  removalPolicy: RemovalPolicy;
}

export class RelayEdgeAccessLogs extends Construct {
  public readonly logGroup: LogGroup;
  /** True only where the stack is in us-east-1; every resource here carries it. */
  public readonly condition: CfnCondition;
  public readonly source: CfnDeliverySource;
  public readonly destination: CfnDeliveryDestination;
  public readonly delivery: CfnDelivery;

  constructor(scope: Construct, id: string, props: RelayEdgeAccessLogsProps) {
    super(scope, id);
    this.condition = new CfnCondition(this, 'InDeliveryRegion', { expression: Fn.conditionEquals(Aws.REGION, EDGE_LOG_DELIVERY_REGION) });
    // Under /aws/vendedlogs/, where CloudWatch Logs keeps the delivery's resource policy short
    // (CloudWatch Logs User Guide, "Logs sent to CloudWatch Logs").
    this.logGroup = new LogGroup(this, 'LogGroup', {
      logGroupName: `/aws/vendedlogs/cloudfront/${Names.uniqueResourceName(this, { maxLength: 80 })}`,
      retention: props.retention,
      removalPolicy: props.removalPolicy,
    });
    (this.logGroup.node.defaultChild as CfnLogGroup).cfnOptions.condition = this.condition;
    const name = Names.uniqueResourceName(this, { maxLength: 55 });
    this.source = new CfnDeliverySource(this, 'Source', { name: `${name}-src`, logType: 'ACCESS_LOGS', resourceArn: props.distribution.distributionArn });
    this.destination = new CfnDeliveryDestination(this, 'Destination', { name: `${name}-dst`, destinationResourceArn: this.logGroup.logGroupArn, outputFormat: 'json' });
    this.delivery = new CfnDelivery(this, 'Delivery', {
      deliverySourceName: this.source.name,
      deliveryDestinationArn: this.destination.attrArn,
      recordFields: [...EDGE_LOG_FIELDS],
    });
    // The delivery names its source by name, not by reference.
    this.delivery.node.addDependency(this.source);
    for (const resource of [this.source, this.destination, this.delivery]) resource.cfnOptions.condition = this.condition;
  }
}
