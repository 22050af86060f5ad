package pgwire

import (
	"sort"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/server"
	"github.com/arrowstream/arrowstream/vector"
)

// The columns of the catalog relations: PostgreSQL's names, with oid,
// regproc and "char" columns as bigint and text, and arrays (ACLs,
// options) as text that is always NULL.

// cols builds fields from "name:type" pairs: o oid (bigint), i integer,
// s smallint, t text, b boolean, f real.
func cols(spec string) []arrow.Field {
	var out []arrow.Field
	for _, c := range strings.Fields(spec) {
		name, typ, _ := strings.Cut(c, ":")
		var dt arrow.DataType
		switch typ {
		case "o":
			dt = vector.Int64
		case "i":
			dt = arrow.PrimitiveTypes.Int32
		case "s":
			dt = arrow.PrimitiveTypes.Int16
		case "b":
			dt = vector.Boolean
		case "f":
			dt = arrow.PrimitiveTypes.Float32
		default:
			dt = vector.String
		}
		out = append(out, arrow.Field{Name: name, Type: dt, Nullable: true})
	}
	return out
}

var catalogRelations = []catalogRelation{
	{pgCatalogSchema, "pg_namespace", cols("oid:o nspname:t nspowner:o nspacl:t"), namespaceRows},
	{pgCatalogSchema, "pg_class", cols(`oid:o relname:t relnamespace:o reltype:o reloftype:o relowner:o relam:o
		relfilenode:o reltablespace:o relpages:i reltuples:f relallvisible:i reltoastrelid:o relhasindex:b
		relisshared:b relpersistence:t relkind:t relnatts:s relchecks:s relhasrules:b relhastriggers:b
		relhassubclass:b relrowsecurity:b relforcerowsecurity:b relispopulated:b relreplident:t
		relispartition:b relrewrite:o relfrozenxid:o relminmxid:o relacl:t reloptions:t relpartbound:t`), classRows},
	{pgCatalogSchema, "pg_attribute", cols(`attrelid:o attname:t atttypid:o attstattarget:i attlen:s attnum:s
		attndims:i attcacheoff:i atttypmod:i attbyval:b attalign:t attstorage:t attcompression:t attnotnull:b
		atthasdef:b atthasmissing:b attidentity:t attgenerated:t attisdropped:b attislocal:b attinhcount:i
		attcollation:o attacl:t attoptions:t attfdwoptions:t attmissingval:t`), attributeRows},
	{pgCatalogSchema, "pg_type", cols(`oid:o typname:t typnamespace:o typowner:o typlen:s typbyval:b typtype:t
		typcategory:t typispreferred:b typisdefined:b typdelim:t typrelid:o typsubscript:o typelem:o typarray:o
		typinput:o typoutput:o typreceive:o typsend:o typmodin:o typmodout:o typanalyze:o typalign:t
		typstorage:t typnotnull:b typbasetype:o typtypmod:i typndims:i typcollation:o typdefaultbin:t
		typdefault:t typacl:t`), typeRows},
	{pgCatalogSchema, "pg_database", cols(`oid:o datname:t datdba:o encoding:i datlocprovider:t datistemplate:b
		datallowconn:b datconnlimit:i datfrozenxid:o datminmxid:o dattablespace:o datcollate:t datctype:t
		daticulocale:t datcollversion:t datacl:t`), databaseRows},
	{pgCatalogSchema, "pg_settings", cols(`name:t setting:t unit:t category:t short_desc:t extra_desc:t context:t
		vartype:t source:t min_val:t max_val:t enumvals:t boot_val:t reset_val:t sourcefile:t sourceline:i
		pending_restart:b`), settingsRows},
	{pgCatalogSchema, "pg_roles", cols(`rolname:t rolsuper:b rolinherit:b rolcreaterole:b rolcreatedb:b
		rolcanlogin:b rolreplication:b rolconnlimit:i rolpassword:t rolvaliduntil:t rolbypassrls:b
		rolconfig:t oid:o`), rolesRows},
	{pgCatalogSchema, "pg_user", cols(`usename:t usesysid:o usecreatedb:b usesuper:b userepl:b usebypassrls:b
		passwd:t valuntil:t useconfig:t`), userRows},
	{pgCatalogSchema, "pg_am", cols("oid:o amname:t amhandler:o amtype:t"), func(_ *snapshot, b *rowBuilder) {
		b.add(oidHeapAM, "heap", 0, "t")
	}},
	// Relations tools join that have no rows here: no indexes,
	// constraints, comments, defaults, functions, inheritance, triggers,
	// policies, statistics, publications, enums, sequences.
	{pgCatalogSchema, "pg_index", cols(`indexrelid:o indrelid:o indnatts:s indnkeyatts:s indisunique:b
		indnullsnotdistinct:b indisprimary:b indisexclusion:b indimmediate:b indisclustered:b indisvalid:b
		indcheckxmin:b indisready:b indislive:b indisreplident:b indkey:t indcollation:t indclass:t
		indoption:t indexprs:t indpred:t`), nil},
	{pgCatalogSchema, "pg_constraint", cols(`oid:o conname:t connamespace:o contype:t condeferrable:b
		condeferred:b convalidated:b conrelid:o contypid:o conindid:o conparentid:o confrelid:o
		confupdtype:t confdeltype:t confmatchtype:t conislocal:b coninhcount:i connoinherit:b conkey:t
		confkey:t conpfeqop:t conppeqop:t conffeqop:t confdelsetcols:t conexclop:t conbin:t`), nil},
	{pgCatalogSchema, "pg_description", cols("objoid:o classoid:o objsubid:i description:t"), nil},
	{pgCatalogSchema, "pg_shdescription", cols("objoid:o classoid:o description:t"), nil},
	{pgCatalogSchema, "pg_attrdef", cols("oid:o adrelid:o adnum:s adbin:t"), nil},
	{pgCatalogSchema, "pg_proc", cols(`oid:o proname:t pronamespace:o proowner:o prolang:o procost:f
		prorows:f provariadic:o prosupport:o prokind:t prosecdef:b proleakproof:b proisstrict:b
		proretset:b provolatile:t proparallel:t pronargs:s pronargdefaults:s prorettype:o proargtypes:t
		proallargtypes:t proargmodes:t proargnames:t proargdefaults:t protrftypes:t prosrc:t probin:t
		prosqlbody:t proconfig:t proacl:t`), nil},
	{pgCatalogSchema, "pg_collation", cols(`oid:o collname:t collnamespace:o collowner:o collprovider:t
		collisdeterministic:b collencoding:i collcollate:t collctype:t colliculocale:t collversion:t`), nil},
	{pgCatalogSchema, "pg_inherits", cols("inhrelid:o inhparent:o inhseqno:i inhdetachpending:b"), nil},
	{pgCatalogSchema, "pg_trigger", cols(`oid:o tgrelid:o tgparentid:o tgname:t tgfoid:o tgtype:s tgenabled:t
		tgisinternal:b tgconstrrelid:o tgconstrindid:o tgconstraint:o tgdeferrable:b tginitdeferred:b
		tgnargs:s tgattr:t tgargs:t tgqual:t tgoldtable:t tgnewtable:t`), nil},
	{pgCatalogSchema, "pg_policy", cols("oid:o polname:t polrelid:o polcmd:t polpermissive:b polroles:t polqual:t polwithcheck:t"), nil},
	{pgCatalogSchema, "pg_statistic_ext", cols(`oid:o stxrelid:o stxname:t stxnamespace:o stxowner:o
		stxstattarget:i stxkeys:t stxkind:t stxexprs:t`), nil},
	{pgCatalogSchema, "pg_publication", cols(`oid:o pubname:t pubowner:o puballtables:b pubinsert:b pubupdate:b
		pubdelete:b pubtruncate:b pubviaroot:b`), nil},
	{pgCatalogSchema, "pg_publication_rel", cols("oid:o prpubid:o prrelid:o prqual:t prattrs:t"), nil},
	{pgCatalogSchema, "pg_publication_namespace", cols("oid:o pnpubid:o pnnspid:o"), nil},
	{pgCatalogSchema, "pg_enum", cols("oid:o enumtypid:o enumsortorder:f enumlabel:t"), nil},
	{pgCatalogSchema, "pg_sequence", cols(`seqrelid:o seqtypid:o seqstart:o seqincrement:o seqmax:o seqmin:o
		seqcache:o seqcycle:b`), nil},
	{pgCatalogSchema, "pg_partitioned_table", cols(`partrelid:o partstrat:t partnatts:s partdefid:o partattrs:t
		partclass:t partcollation:t partexprs:t`), nil},
	{pgCatalogSchema, "pg_depend", cols("classid:o objid:o objsubid:i refclassid:o refobjid:o refobjsubid:i deptype:t"), nil},
	{pgCatalogSchema, "pg_rewrite", cols("oid:o rulename:t ev_class:o ev_type:t ev_enabled:t is_instead:b ev_qual:t ev_action:t"), nil},
	{pgCatalogSchema, "pg_extension", cols(`oid:o extname:t extowner:o extnamespace:o extrelocatable:b
		extversion:t extconfig:t extcondition:t`), nil},
	{pgCatalogSchema, "pg_tablespace", cols("oid:o spcname:t spcowner:o spcacl:t spcoptions:t"), func(_ *snapshot, b *rowBuilder) {
		b.add(1663, "pg_default", oidOwner, nil, nil)
	}},
	{pgCatalogSchema, "pg_foreign_table", cols("ftrelid:o ftserver:o ftoptions:t"), nil},
	{pgCatalogSchema, "pg_matviews", cols(`schemaname:t matviewname:t matviewowner:t tablespace:t hasindexes:b
		ispopulated:b definition:t`), nil},
	{pgCatalogSchema, "pg_views", cols("schemaname:t viewname:t viewowner:t definition:t"), nil},
	{pgCatalogSchema, "pg_tables", cols(`schemaname:t tablename:t tableowner:t tablespace:t hasindexes:b
		hasrules:b hastriggers:b rowsecurity:b`), tablesRows},

	{infoSchema, "schemata", cols(`catalog_name:t schema_name:t schema_owner:t default_character_set_catalog:t
		default_character_set_schema:t default_character_set_name:t sql_path:t`), schemataRows},
	{infoSchema, "tables", cols(`table_catalog:t table_schema:t table_name:t table_type:t
		self_referencing_column_name:t reference_generation:t user_defined_type_catalog:t
		user_defined_type_schema:t user_defined_type_name:t is_insertable_into:t is_typed:t commit_action:t`), infoTablesRows},
	{infoSchema, "columns", cols(`table_catalog:t table_schema:t table_name:t column_name:t ordinal_position:i
		column_default:t is_nullable:t data_type:t character_maximum_length:i character_octet_length:i
		numeric_precision:i numeric_precision_radix:i numeric_scale:i datetime_precision:i interval_type:t
		interval_precision:i character_set_catalog:t character_set_schema:t character_set_name:t
		collation_catalog:t collation_schema:t collation_name:t domain_catalog:t domain_schema:t domain_name:t
		udt_catalog:t udt_schema:t udt_name:t scope_catalog:t scope_schema:t scope_name:t
		maximum_cardinality:i dtd_identifier:t is_self_referencing:t is_identity:t identity_generation:t
		identity_start:t identity_increment:t identity_maximum:t identity_minimum:t identity_cycle:t
		is_generated:t generation_expression:t is_updatable:t`), infoColumnsRows},
	{infoSchema, "views", cols(`table_catalog:t table_schema:t table_name:t view_definition:t check_option:t
		is_updatable:t is_insertable_into:t is_trigger_updatable:t is_trigger_deletable:t
		is_trigger_insertable_into:t`), nil},
}

// userSchemas are the schemas user relations live in.
var userSchemas = []string{server.DefaultSchema, server.SystemSchema}

func namespaceRows(_ *snapshot, b *rowBuilder) {
	for _, n := range []string{pgCatalogSchema, infoSchema, server.DefaultSchema, server.SystemSchema} {
		b.add(nspOID(n), n, oidOwner, nil)
	}
}

func classRows(s *snapshot, b *rowBuilder) {
	for _, r := range s.rels {
		b.add(r.oid, r.name, nspOID(r.schema), 0, 0, oidOwner, oidHeapAM, r.oid, 0, 0, float64(-1), 0, 0, false,
			false, "p", r.kind, len(r.fields), 0, false, false, false, false, false, true, "d",
			false, 0, 0, 0, nil, nil, nil)
	}
}

func attributeRows(s *snapshot, b *rowBuilder) {
	for _, r := range s.rels {
		for i, f := range r.fields {
			t, typmod := columnType(f.Type)
			coll := 0
			if t.oid == oidText {
				coll = 100
			}
			ndims := 0
			if t.elem != 0 {
				ndims = 1
			}
			b.add(r.oid, f.Name, t.oid, -1, t.size, i+1, ndims, -1, typmod, t.size > 0 && t.size <= 8, "d", "p", "",
				!f.Nullable, false, false, "", "", false, true, 0, coll, nil, nil, nil, nil)
		}
	}
}

// columnType is the PostgreSQL type and type modifier a column is
// described with (text for a type the endpoint cannot send).
func columnType(dt arrow.DataType) (pgType, int) {
	t, err := typeOf(dt)
	if err != nil {
		return scalarTypes[oidText], -1
	}
	if d, ok := dt.(*arrow.Decimal128Type); ok {
		return t, int(d.Precision)<<16 | int(d.Scale) + 4
	}
	return t, -1
}

// pgTypeRow is a pg_type row: the types the endpoint sends, and those
// catalog queries name.
type pgTypeRow struct {
	oid      uint32
	name     string // typname
	size     int16
	category string
	elem     uint32
}

var pgTypeRows = func() []pgTypeRow {
	rows := []pgTypeRow{
		{oidBool, "bool", 1, "B", 0}, {oidBytea, "bytea", -1, "U", 0}, {18, "char", 1, "Z", 0},
		{19, "name", 64, "S", 0}, {oidInt8, "int8", 8, "N", 0}, {oidInt2, "int2", 2, "N", 0},
		{oidInt4, "int4", 4, "N", 0}, {oidText, "text", -1, "S", 0}, {26, "oid", 4, "N", 0},
		{oidJSON, "json", -1, "U", 0}, {oidFloat4, "float4", 4, "N", 0}, {oidFloat8, "float8", 8, "N", 0},
		{oidUnknown, "unknown", -2, "X", 0}, {oidVarchar, "varchar", -1, "S", 0}, {oidDate, "date", 4, "D", 0},
		{oidTimestamp, "timestamp", 8, "D", 0}, {oidTimestamptz, "timestamptz", 8, "D", 0},
		{oidInterval, "interval", 16, "T", 0}, {oidNumeric, "numeric", -1, "N", 0}, {2205, "regclass", 4, "N", 0},
	}
	names := map[uint32]string{}
	for _, r := range rows {
		names[r.oid] = r.name
	}
	for elem, arr := range arrayOf {
		rows = append(rows, pgTypeRow{arr, "_" + names[elem], -1, "A", elem})
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].oid < rows[j].oid })
	return rows
}()

func typeRows(_ *snapshot, b *rowBuilder) {
	for _, t := range pgTypeRows {
		coll := 0
		if t.category == "S" && t.oid != 19 {
			coll = 100
		}
		arr := arrayOf[t.oid]
		b.add(t.oid, t.name, oidNspCatalog, oidOwner, t.size, t.size > 0 && t.size <= 8, "b", t.category, false, true,
			",", 0, 0, t.elem, arr, 0, 0, 0, 0, 0, 0, 0, "i", "p", false, 0, -1, 0, coll, nil, nil, nil)
	}
}

func databaseRows(_ *snapshot, b *rowBuilder) {
	b.add(oidDatabase, databaseName, oidOwner, 6, "c", false, true, -1, 0, 0, 1663, "C", "C", nil, nil, nil)
}

func settingsRows(s *snapshot, b *rowBuilder) {
	for _, kv := range s.settings {
		b.add(kv[0], kv[1], nil, "Client Connection Defaults", "", nil, "user", "string", "session",
			nil, nil, nil, kv[1], kv[1], nil, nil, false)
	}
}

func rolesRows(s *snapshot, b *rowBuilder) {
	b.add(roleName(s), false, true, false, false, true, false, -1, "********", nil, false, nil, oidOwner)
}

func userRows(s *snapshot, b *rowBuilder) {
	b.add(roleName(s), oidOwner, false, false, false, false, "********", nil, nil)
}

// roleName is the owner of everything: the database's name (what psql's
// \dt shows as Owner), or the session's user.
func roleName(s *snapshot) string {
	if s.user != "" {
		return s.user
	}
	return databaseName
}

func tablesRows(s *snapshot, b *rowBuilder) {
	for _, r := range s.rels {
		if r.kind == "r" {
			b.add(r.schema, r.name, databaseName, nil, false, false, false, false)
		}
	}
}

func schemataRows(_ *snapshot, b *rowBuilder) {
	for _, n := range []string{pgCatalogSchema, infoSchema, server.DefaultSchema, server.SystemSchema} {
		b.add(databaseName, n, databaseName, nil, nil, nil, nil)
	}
}

func infoTablesRows(s *snapshot, b *rowBuilder) {
	for _, r := range s.rels {
		typ := "BASE TABLE"
		if r.kind == "v" {
			typ = "VIEW"
		}
		b.add(databaseName, r.schema, r.name, typ, nil, nil, nil, nil, nil, "NO", "NO", nil)
	}
}

func infoColumnsRows(s *snapshot, b *rowBuilder) {
	for _, r := range s.rels {
		for i, f := range r.fields {
			t, typmod := columnType(f.Type)
			dataType, udt := t.name, pgTypeName(t.oid)
			if t.elem != 0 {
				dataType, udt = "ARRAY", "_"+pgTypeName(t.elem)
			}
			var prec, radix, scale, dtPrec any
			switch t.oid {
			case oidInt2:
				prec, radix, scale = 16, 2, 0
			case oidInt4:
				prec, radix, scale = 32, 2, 0
			case oidInt8:
				prec, radix, scale = 64, 2, 0
			case oidFloat4:
				prec, radix = 24, 2
			case oidFloat8:
				prec, radix = 53, 2
			case oidNumeric:
				radix = 10
				if typmod >= 4 {
					prec, scale = (typmod-4)>>16, (typmod-4)&0xffff
				}
			case oidDate:
				dtPrec = 0
			case oidTimestamp, oidTimestamptz, oidInterval:
				dtPrec = 6
			}
			b.add(databaseName, r.schema, r.name, f.Name, i+1, nil, yesNo(f.Nullable), dataType, nil, nil,
				prec, radix, scale, dtPrec, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil,
				databaseName, pgCatalogSchema, udt, nil, nil, nil, nil, strings.TrimPrefix(udt, "_"), "NO", "NO", nil,
				nil, nil, nil, nil, "NO", "NEVER", nil, "NO")
		}
	}
}

func pgTypeName(oid uint32) string {
	for _, t := range pgTypeRows {
		if t.oid == oid {
			return t.name
		}
	}
	return "text"
}

func yesNo(b bool) string {
	if b {
		return "YES"
	}
	return "NO"
}

// sortedParams are the canonical names of the session's parameters.
func sortedParams() []string {
	var out []string
	for _, canon := range pgParams {
		out = append(out, canon)
	}
	sort.Strings(out)
	return out
}
