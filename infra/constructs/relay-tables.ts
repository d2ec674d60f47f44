/**
 * The relay's DynamoDB tables, built from `TABLE_DEFINITIONS` (src/store/table-definitions.ts),
 * the same declarations the local stack creates its tables from: keys, any local indexes,
 * the TTL attribute and the stream all come from there, never restated here.
 */
import { RemovalPolicy } from 'aws-cdk-lib';
import { AttributeType, BillingMode, ProjectionType, StreamViewType, Table } from 'aws-cdk-lib/aws-dynamodb';
import type { Attribute } from 'aws-cdk-lib/aws-dynamodb';
import { Construct } from 'constructs';
import { CONNECTIONS_TABLE, EVENTS_TABLE, TABLE_DEFINITIONS, TENANTS_TABLE } from '../../src/store/table-definitions.ts';
import type { KeyAttribute, TableDefinition, TableNames } from '../../src/store/table-definitions.ts';

export interface RelayTablesProps {
  /** Applied to every table: RETAIN_ON_UPDATE_OR_DELETE keeps the data when the stack (or a table) goes, except when the deploy that created it rolls back; DESTROY deletes it. */
  removalPolicy: RemovalPolicy;
  /** DynamoDB deletion protection: the table cannot be deleted until it is turned off. */
  deletionProtection: boolean;
}

export class RelayTables extends Construct {
  /** The event log; its stream (new images) drives fan-out. */
  public readonly events: Table;
  /** Connection state, subscriptions and session claims. */
  public readonly connections: Table;
  /** Tenants and their hashed tokens. */
  public readonly tenants: Table;
  /** Whether the tables are protected and, where they are kept but not yet protected, what turns it on: for the deploy output. */
  public readonly deletionProtectionStatus: string;

  constructor(scope: Construct, id: string, props: RelayTablesProps) {
    super(scope, id);
    const tables = new Map(TABLE_DEFINITIONS.map((definition) => [definition.id, tableFrom(this, definition, props)]));
    this.events = required(tables, EVENTS_TABLE);
    this.connections = required(tables, CONNECTIONS_TABLE);
    this.tenants = required(tables, TENANTS_TABLE);
    this.deletionProtectionStatus = deletionProtectionStatusOf(props);
  }

  /** The physical names, shaped as the relay's configuration takes them. */
  get names(): TableNames {
    return { events: this.events.tableName, connections: this.connections.tableName, tenants: this.tenants.tableName };
  }

  get all(): readonly Table[] {
    return [this.events, this.connections, this.tenants];
  }
}

/**
 * On, or why not. Protection is off on purpose for a stack's first deploy (docs/deploy-and-upgrade.md
 * "First deploy on a new account"): CloudFormation deletes what a failed create made (`RetainExceptOnCreate`), and
 * it cannot delete a protected table, so that rollback would end in ROLLBACK_FAILED. The next
 * deploy without `-c deletionProtection=false` turns it on, an in-place update of the tables.
 */
export function deletionProtectionStatusOf(props: RelayTablesProps): string {
  if (props.deletionProtection) return 'on';
  if (props.removalPolicy === RemovalPolicy.DESTROY) return 'off (-c removalPolicy=destroy: the tables go with the stack)';
  return 'OFF: a failed create rolls back cleanly, but nothing stops a table being deleted; once this deploy has completed, deploy again without -c deletionProtection=false to turn it on';
}

function tableFrom(scope: Construct, definition: TableDefinition, props: RelayTablesProps): Table {
  const table = new Table(scope, definition.id, {
    partitionKey: attribute(definition.partitionKey),
    sortKey: attribute(definition.sortKey),
    // On demand: cost follows traffic, and an idle relay costs nothing (DESIGN.md, cost model).
    billingMode: BillingMode.PAY_PER_REQUEST,
    pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
    deletionProtection: props.deletionProtection,
    removalPolicy: props.removalPolicy,
    ...(definition.timeToLiveAttribute === undefined ? {} : { timeToLiveAttribute: definition.timeToLiveAttribute }),
    // Fan-out reads the stored text from the new image; old images are never needed.
    ...(definition.streamNewImages ? { stream: StreamViewType.NEW_IMAGE } : {}),
  });
  for (const index of definition.localIndexes) {
    table.addLocalSecondaryIndex({
      indexName: index.indexName,
      sortKey: attribute(index.sortKey),
      projectionType: index.projection === 'ALL' ? ProjectionType.ALL : ProjectionType.KEYS_ONLY,
    });
  }
  for (const index of definition.globalIndexes) {
    table.addGlobalSecondaryIndex({
      indexName: index.indexName,
      partitionKey: attribute(index.partitionKey),
      sortKey: attribute(index.sortKey),
      projectionType: index.projection === 'ALL' ? ProjectionType.ALL : ProjectionType.KEYS_ONLY,
    });
  }
  return table;
}

function attribute(key: KeyAttribute): Attribute {
  return { name: key.name, type: key.type === 'S' ? AttributeType.STRING : AttributeType.NUMBER };
}

function required(tables: ReadonlyMap<TableDefinition['id'], Table>, definition: TableDefinition): Table {
  const table = tables.get(definition.id);
  if (table === undefined) throw new Error(`TABLE_DEFINITIONS has no ${definition.id} table`);
  return table;
}
