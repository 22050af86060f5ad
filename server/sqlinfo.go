package server

import (
	"context"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/flight"
	"github.com/apache/arrow/go/v17/arrow/flight/flightsql"
	"github.com/apache/arrow/go/v17/arrow/flight/flightsql/schema_ref"
	pb "github.com/apache/arrow/go/v17/arrow/flight/gen/flight"
	"google.golang.org/grpc/codes"

	"github.com/arrowstream/arrowstream/vector"
)

// Version is the server version reported by GetSqlInfo.
const Version = "0.1.0"

// arrowVersion is the Arrow library the server is built on.
const arrowVersion = "17.0.0"

// registerSQLInfo records the answers to GetSqlInfo. JDBC tools read many
// of these for DatabaseMetaData.
func (q *sqlServer) registerSQLInfo() error {
	info := map[flightsql.SqlInfo]any{
		flightsql.SqlInfoFlightSqlServerName:                        "Arrowstream",
		flightsql.SqlInfoFlightSqlServerVersion:                     Version,
		flightsql.SqlInfoFlightSqlServerArrowVersion:                arrowVersion,
		flightsql.SqlInfoFlightSqlServerReadOnly:                    false,
		flightsql.SqlInfoFlightSqlServerSql:                         true,
		flightsql.SqlInfoFlightSqlServerSubstrait:                   false,
		flightsql.SqlInfoFlightSqlServerTransaction:                 int32(flightsql.SqlTransactionNone),
		flightsql.SqlInfoFlightSqlServerCancel:                      false,
		flightsql.SqlInfoFlightSqlServerBulkIngestion:               q.s.cfg.Ingest != nil,
		flightsql.SqlInfoFlightSqlServerIngestTransactionsSupported: false,
		flightsql.SqlInfoDDLCatalog:                                 false,
		flightsql.SqlInfoDDLSchema:                                  false,
		flightsql.SqlInfoDDLTable:                                   true,
		flightsql.SqlInfoIdentifierCase:                             int32(flightsql.SqlCaseSensitivityCaseInsensitive),
		flightsql.SqlInfoIdentifierQuoteChar:                        "`",
		flightsql.SqlInfoQuotedIdentifierCase:                       int32(flightsql.SqlCaseSensitivityCaseInsensitive),
		flightsql.SqlInfoAllTablesAreASelectable:                    true,
		flightsql.SqlInfoNullOrdering:                               int32(flightsql.SqlNullOrderingSortAtStart),
		flightsql.SqlInfoSearchStringEscape:                         `\`,
		flightsql.SqlInfoSupportsColumnAliasing:                     true,
		flightsql.SqlInfoNullPlusNullIsNull:                         true,
		flightsql.SqlInfoSupportsLikeEscapeClause:                   false,
	}
	if t := q.s.cfg.Limits.QueryTimeout; t > 0 {
		info[flightsql.SqlInfoFlightSqlServerStatementTimeout] = int32(t.Milliseconds())
	}
	for id, v := range info {
		if err := q.RegisterSqlInfo(id, v); err != nil {
			return err
		}
	}
	q.sqlInfoIDs = make(map[uint32]bool, len(info))
	for id := range info {
		q.sqlInfoIDs[uint32(id)] = true
	}
	return nil
}

// knownInfo filters a GetSqlInfo request to the ids the server answers:
// arrow-go's BaseServer fails the whole request on an unknown id, while
// the specification (and JDBC tools asking for many ids) expect unknown
// ones to be left out.
type knownInfo struct{ ids []uint32 }

func (k knownInfo) GetInfo() []uint32 { return k.ids }

// doGetSQLInfo streams the SqlInfo answers. BaseServer builds the dense
// union; its producer goroutine is drained here at once (the result is a
// few rows), so it cannot leak when the client goes away.
func (q *sqlServer) doGetSQLInfo(ctx context.Context, cmd *pb.CommandGetSqlInfo, stream flight.FlightService_DoGetServer) error {
	req := knownInfo{}
	for _, id := range cmd.GetInfo() {
		if q.sqlInfoIDs[id] {
			req.ids = append(req.ids, id)
		}
	}
	var recs []arrow.Record
	if len(cmd.GetInfo()) == 0 || len(req.ids) > 0 {
		_, ch, err := q.DoGetSqlInfo(ctx, req)
		if err != nil {
			return err
		}
		for chunk := range ch {
			if chunk.Err != nil {
				releaseAll(recs)
				return statusOf(chunk.Err, codes.Internal)
			}
			recs = append(recs, chunk.Data)
		}
	}
	return statusOf(q.s.sendStream(ctx, stream, schema_ref.SqlInfo, vector.NewOwnedScan(schema_ref.SqlInfo, recs)), codes.Internal)
}
