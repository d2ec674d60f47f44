/** The physical names a deployment gives its tables (`src/store/table-definitions.ts` declares the tables). */
export interface TableNames {
  events: string;
  connections: string;
  tenants: string;
}
