package pgwire

// sqlalchemyProg inspects the endpoint with SQLAlchemy's inspector and
// reads a table with pandas.read_sql_table (argv: host, port).
const sqlalchemyProg = `
import sys, warnings
warnings.simplefilter("ignore")
import sqlalchemy as sa, pandas as pd
eng = sa.create_engine("postgresql+psycopg2://alice@%s:%s/arrowstream" % (sys.argv[1], sys.argv[2]))
insp = sa.inspect(eng)
print("schemas:", insp.get_schema_names())
print("default schema:", insp.default_schema_name)
print("tables:", insp.get_table_names())
print("system tables:", insp.get_table_names(schema="system"))
print("has types_t:", insp.has_table("types_t"), "has nope:", insp.has_table("nope"))
for c in insp.get_columns("types_t"):
    print("column:", c["name"], c["type"], c["nullable"], c["default"])
df = pd.read_sql_table("types_t", eng)
print(df.dtypes.to_string())
print(df[["id", "i4", "f8", "s", "ts", "d"]].to_string())
`
