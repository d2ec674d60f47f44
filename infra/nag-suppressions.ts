/**
 * cdk-nag (AwsSolutions) findings this stack accepts, each on the narrowest construct and,
 * for granular rules, the exact finding (`AwsSolutions-IAM5[Resource::…]`), with the
 * reason. A new wildcard, a new resource or a new rule still fails the check.
 *
 * cdk-nag 3 reads acknowledgements from `Validations.of(construct).acknowledge()` (its
 * MIGRATION.md: NagSuppressions was removed in v3).
 */
import { Stack, Token, Validations } from 'aws-cdk-lib';
import type { CfnElement } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';
import type { RelayStack } from './relay-stack.ts';
import type { RelaySettings } from './relay-settings.ts';

export function suppressAcceptedFindings(stack: RelayStack, settings: RelaySettings): void {
  const { functions, tables, webSocketApi, httpApi, fanout, bridges, edge } = stack;
  const consoleSite = stack.console;

  // --- IAM -------------------------------------------------------------------------------
  const eventsIndexes = `AwsSolutions-IAM5[Resource::<${logicalId(tables.events)}.Arn>/index/*]`;
  acknowledge(functions.http.role, eventsIndexes,
    'dynamodb:Query only, on the indexes of this one table (`<table ARN>/index/*`): its one index is byActivity, the sparse global index of session summaries that GET /sessions queries (src/store/table-definitions.ts). No other table and no other resource is matched.');
  for (const { grantee, verbs } of functions.connectionManagers) {
    for (const verb of verbs) {
      // The partition is a literal where the stack's region is known (feature flag @aws-cdk/core:enablePartitionLiterals).
      const connections = `AwsSolutions-IAM5[Resource::arn:${nagText(stack.partition, 'AWS::Partition')}:execute-api:${nagText(stack.region, 'AWS::Region')}:${nagText(stack.account, 'AWS::AccountId')}:<${logicalId(webSocketApi.api)}>/${webSocketApi.stage.stageName}/${verb}/@connections/*]`;
      acknowledge(grantee.role, connections,
        `execute-api:ManageConnections with ${verb} only, on this WebSocket API and stage (the verbs each function calls, MANAGEMENT_VERBS in relay-functions.ts). Connection ids are minted by API Gateway at runtime, so the @connections/{connectionId} resource can only be matched with a wildcard.`);
    }
  }
  if (settings.tracing) {
    for (const fn of functions.all.filter((candidate) => candidate !== functions.fanout && candidate !== functions.bridges)) {
      acknowledge(fn.role, 'AwsSolutions-IAM5[Resource::*]',
        'Active tracing (-c tracing=true): xray:PutTraceSegments and xray:PutTelemetryRecords, which Lambda needs to send traces, have no resource-level permissions and take "*" only (aws-cdk-lib adds them with Tracing.ACTIVE).');
    }
  }
  for (const fn of [functions.fanout, functions.bridges]) {
    acknowledge(fn.role, 'AwsSolutions-IAM5[Resource::*]',
      `dynamodb:ListStreams, added by the DynamoDB event source (Table.grantStreamRead), has no resource-level permissions and takes "*" only; the record-reading actions (DescribeStream, GetRecords, GetShardIterator) are scoped to the events table stream ARN.${settings.tracing ? ' With -c tracing=true also xray:PutTraceSegments and xray:PutTelemetryRecords, which have no resource-level permissions either.' : ''}`);
  }

  // --- Lambda ----------------------------------------------------------------------------
  for (const fn of functions.all) {
    acknowledge(fn, 'AwsSolutions-L1',
      'Pinned to nodejs22.x on purpose: the bundles target node22 (infra/bundle.ts) and the project develops and tests on Node 22 (the node@22 dev dependency, docs/development.md "Node.js version"), so what runs in Lambda is what was tested. Move all three together.');
  }

  // --- API Gateway -----------------------------------------------------------------------
  for (const route of httpApi.routes) {
    acknowledge(route, 'AwsSolutions-APIG4',
      'Authentication is the relay\'s own bearer token, resolved by the http function against the tenants table (AEP-0003 §8.1: Authorization header, or access_token on GET); /healthz is public by design. An API Gateway authorizer would add an invocation per request and cannot express the GET-only query token rule.');
  }
  for (const routeKey of ['$default', '$disconnect']) {
    const route = webSocketApi.api.node.tryFindChild(`${routeKey}-Route`);
    if (route !== undefined) {
      acknowledge(route, 'AwsSolutions-APIG4',
        'API Gateway runs authorizers on $connect only (API Gateway Developer Guide, "Control access to WebSocket APIs with AWS Lambda REQUEST authorizers"); $connect has the token authorizer and its context reaches every later route of the connection, which the socket function requires.');
    }
  }
  if (!settings.webSocketAccessLogs) {
    acknowledge(webSocketApi.stage, 'AwsSolutions-APIG1',
      'WebSocket stages write access logs through the account-wide API Gateway CloudWatch role, which this stack does not own and whose absence fails the deploy; turn them on with -c webSocketAccessLogs=true where the role exists. The socket function logs every connect, disconnect and failed frame as JSON.');
  }

  // --- Failed-batch archives (S3) ------------------------------------------------------
  for (const [fn, archive] of [[functions.fanout, fanout.failedBatches], [functions.bridges, bridges.failedBatches]] as const) {
    acknowledge(archive.bucket, 'AwsSolutions-S1',
      'The on-failure destination of a stream event source mapping: only Lambda writes here (the function role may PutObject and ListBucket, nothing else) and operators read it; its writes are counted by the bucket\'s request metrics (the failed-batch alarm), so server access logs would record only those writes.');
    acknowledge(fn.role, `AwsSolutions-IAM5[Resource::<${logicalId(archive.bucket)}.Arn>/*]`,
      'Lambda names each failure record object itself (an S3 on-failure destination takes the bucket, not a key), so s3:PutObject is granted on this one bucket\'s objects; no read, delete or other bucket.');
  }

  // --- SQS -------------------------------------------------------------------------------
  acknowledge(stack.deadlines.failures, 'AwsSolutions-SQS3',
    'This queue is itself the failure destination of the deadline function (asynchronous invocations) and the dead-letter queue of its sweep rule; it holds failed invocations for inspection, nothing consumes it (the deadlines stay in their index for the next sweep), so it has no dead-letter queue of its own.');
  acknowledge(bridges.retryFailures, 'AwsSolutions-SQS3',
    'This queue is itself the dead-letter queue of the sink-retry queue; it holds wake-ups for inspection (their letters stay redrivable in the tenants table), nothing consumes it, so it has no dead-letter queue of its own.');

  // --- CloudFront ------------------------------------------------------------------------
  acknowledge(edge.distribution, 'AwsSolutions-CFR1',
    'Agents and dashboards connect from anywhere; access is per tenant and per token, not per country.');
  if (settings.webAclArn === undefined) {
    acknowledge(edge.distribution, 'AwsSolutions-CFR2',
      'A web ACL is opt-in (-c webAclArn=<CLOUDFRONT-scope web ACL ARN>): every request is authenticated by token at the origin, and WAF bills per request.');
  }
  acknowledge(edge.distribution, 'AwsSolutions-CFR3',
    'The rule checks legacy standard logging (an ACL-enabled S3 bucket). The distribution logs through standard logging v2 into CloudWatch Logs instead (infra/constructs/edge-access-logs.ts, without the query string, where tokens travel), created where CloudFront\'s delivery API exists (us-east-1); every request is also recorded at its origin (HTTP API access logs, the functions\' JSON logs).');

  // --- Secrets Manager -------------------------------------------------------------------
  acknowledge(stack.vapidSecret.secret, 'AwsSolutions-SMG4',
    'The VAPID seed signs Web Push: every browser subscription is bound to the key it derives, so an automatic rotation would silently end every notification. It is rotated by a documented step (put-secret-value, a deploy with -c vapidRotation=true that signs with the new key and keeps the old one while consoles subscribe again, then a plain deploy; docs/web-push.md "Rotating the VAPID key").');
  acknowledge(stack.originSecret.secret, 'AwsSolutions-SMG4',
    'CloudFormation resolves the dynamic references to this secret only when their text changes, so an automatic rotation would leave CloudFront sending a value the functions no longer accept. It is rotated by a documented step instead (put-secret-value, then a deploy with -c originSecretRotation=true that accepts both values while CloudFront switches, then a plain deploy; docs/deploy-and-upgrade.md "Rotating the origin secret").');
  if (settings.domainName === undefined) {
    acknowledge(edge.distribution, 'AwsSolutions-CFR4',
      'Without a custom domain the distribution serves the default *.cloudfront.net certificate, with which CloudFront allows TLSv1 whatever the configured minimum. Deploy with -c domainName=… -c certificateArn=… to enforce TLSv1.2_2021.');
  }

  // --- Console (S3) ----------------------------------------------------------------------
  acknowledgeConsoleUpload(stack, consoleSite);
}

function acknowledgeConsoleUpload(stack: RelayStack, consoleSite: RelayStack['console']): void {
  acknowledge(consoleSite.bucket, 'AwsSolutions-S1',
    'The console bucket holds only the built static console (no tenant data) and is read by this distribution alone through origin access control; viewer requests are not logged anywhere in this stack (AwsSolutions-CFR3 above), so access logs here would record CloudFront\'s own fetches only.');
  // The upload is CDK's BucketDeployment: one singleton function shared by both uploads, its
  // role and runtime chosen by aws-cdk-lib (not configurable) and used only during deploys.
  const uploader = stack.node.children.find((child) => child.node.id.startsWith('Custom::CDKBucketDeployment'));
  const uploaderRole = uploader?.node.tryFindChild('ServiceRole');
  const uploaderPolicy = uploaderRole?.node.tryFindChild('DefaultPolicy');
  acknowledge(uploader, 'AwsSolutions-L1',
    'aws-cdk-lib\'s BucketDeployment handler (Python with the AWS CLI layer) picks its own runtime; it runs only while deploying, to copy the built console into the bucket.');
  // A managed policy's ARN keeps the partition a token even where the stack's partition is known.
  acknowledge(uploaderRole, 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
    'BucketDeployment\'s deploy-time handler writes its own logs with the basic execution role aws-cdk-lib attaches; it reads no relay data.');
  const assetBucket = `arn:${nagText(stack.partition, 'AWS::Partition')}:s3:::cdk-hnb659fds-assets-${nagText(stack.account, 'AWS::AccountId')}-${nagText(stack.region, 'AWS::Region')}/*`;
  const grants: [string, string][] = [
    ['Action::s3:GetObject*', 'read the console asset from the CDK bootstrap bucket and copy it'],
    ['Action::s3:GetBucket*', 'read the bucket location and settings the copy needs'],
    ['Action::s3:List*', 'list what is in the console prefix, so files no longer built are pruned'],
    ['Action::s3:DeleteObject*', 'prune files of an earlier console build'],
    ['Action::s3:Abort*', 'abort a multipart upload it started'],
    [`Resource::${assetBucket}`, 'the CDK bootstrap asset bucket, where the console asset is staged'],
    [`Resource::<${logicalId(consoleSite.bucket)}.Arn>/*`, 'the objects of the console bucket, its only destination'],
  ];
  for (const [finding, purpose] of grants) {
    acknowledge(uploaderPolicy, `AwsSolutions-IAM5[${finding}]`, `BucketDeployment's grant (Bucket.grantRead / grantReadWrite on the two buckets only): ${purpose}.`);
  }
}

function acknowledge(scope: IConstruct | undefined, id: string, reason: string): void {
  if (scope === undefined) throw new Error(`cannot acknowledge ${id}: no construct`);
  Validations.of(scope).acknowledge({ id, reason });
}

/** The CloudFormation logical id cdk-nag prints for a resource (`<LogicalId.Arn>`). */
function logicalId(construct: IConstruct): string {
  const resource = construct.node.defaultChild as CfnElement | undefined;
  if (resource === undefined) throw new Error(`${construct.node.path} has no CloudFormation resource`);
  return Stack.of(construct).getLogicalId(resource);
}

/** How cdk-nag writes a value in a finding: the literal when known, `<AWS::Region>` for a pseudo parameter. */
function nagText(value: string, pseudoParameter: string): string {
  return Token.isUnresolved(value) ? `<${pseudoParameter}>` : value;
}
