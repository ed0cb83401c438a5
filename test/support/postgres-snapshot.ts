import type pg from "pg";

/** Every holdshelf table's columns, indexes and rows, sorted: what "nothing changed" compares. */
export async function postgresSnapshot(client: pg.ClientBase): Promise<unknown> {
  const { rows: tables } = await client.query<{ name: string }>(
    "SELECT tablename AS name FROM pg_tables WHERE tablename LIKE 'holdshelf_%' ORDER BY tablename",
  );
  const columns = await client.query(
    `SELECT table_name, column_name, data_type, is_nullable, collation_name FROM information_schema.columns
     WHERE table_name LIKE 'holdshelf_%' ORDER BY table_name, column_name`,
  );
  const indexes = await client.query("SELECT indexdef FROM pg_indexes WHERE tablename LIKE 'holdshelf_%' ORDER BY 1");
  const rows: Record<string, string[]> = {};
  for (const { name } of tables) {
    const table = await client.query<{ row: string }>(`SELECT to_jsonb(t)::text AS row FROM ${name} t`);
    rows[name] = table.rows.map((row) => row.row).sort();
  }
  return { columns: columns.rows, indexes: indexes.rows, rows };
}
