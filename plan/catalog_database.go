package plan

// DatabaseCatalog is a Catalog with databases (Spark's namespaces): its
// Table resolves a name in the current database, and TableDatabase tells
// which database a name resolves to ("" for a temporary view, or a name
// outside every database), so that the table's columns can also be
// referenced as db.table.column and spark_catalog.db.table.column, as in
// Spark.
type DatabaseCatalog interface {
	Catalog
	TableDatabase(name string) string
}

// GlobalTempDatabase is the database of global temporary views (CREATE
// GLOBAL TEMPORARY VIEW v: read as global_temp.v).
const GlobalTempDatabase = "global_temp"
