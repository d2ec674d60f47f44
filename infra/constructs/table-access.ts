/**
 * Least-privilege table access: the exact DynamoDB actions a function's stores issue on a table
 * (src/store/*), instead of `grantReadWriteData`, which also grants `Scan` (nothing scans: with
 * it the authorizer could read every token digest), `DescribeTable` and the stream reads (the
 * event sources grant those on the stream ARN).
 *
 * Transactions and batches are authorised per item (DynamoDB Developer Guide, "Using IAM with
 * DynamoDB transactions"): `TransactWriteItems` needs the Put/Update/Delete actions of its items
 * and `ConditionCheckItem` for a condition check; `BatchWriteItem` and `BatchGetItem` are
 * actions of their own.
 */
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IGrantable } from 'aws-cdk-lib/aws-iam';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';

export type TableAction =
  | 'dynamodb:GetItem'
  | 'dynamodb:BatchGetItem'
  | 'dynamodb:Query'
  | 'dynamodb:PutItem'
  | 'dynamodb:UpdateItem'
  | 'dynamodb:DeleteItem'
  | 'dynamodb:BatchWriteItem'
  | 'dynamodb:ConditionCheckItem';

/** Point reads and queries of one partition. */
export const ITEM_READS: readonly TableAction[] = ['dynamodb:GetItem', 'dynamodb:Query'];
/** Single-item writes (conditional ones included). */
export const ITEM_WRITES: readonly TableAction[] = ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem'];

export interface TableGrant {
  table: ITable;
  actions: readonly TableAction[];
  /** Queries of the table's global indexes (`<table ARN>/index/*`), for whoever lists by one. */
  indexQueries?: boolean;
}

/** Adds one statement per table to the grantee's policy, with exactly these actions. */
export function grantTableActions(grantee: IGrantable, grants: readonly TableGrant[]): void {
  for (const { table, actions, indexQueries } of grants) {
    grantee.grantPrincipal.addToPrincipalPolicy(new PolicyStatement({ actions: [...new Set(actions)], resources: [table.tableArn] }));
    if (indexQueries === true) grantee.grantPrincipal.addToPrincipalPolicy(new PolicyStatement({ actions: ['dynamodb:Query'], resources: [`${table.tableArn}/index/*`] }));
  }
}
