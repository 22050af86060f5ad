package pgwire

import (
	"context"
	"errors"
	"strings"

	"github.com/jackc/pgx/v5/pgproto3"
	"google.golang.org/grpc/codes"

	"github.com/arrowstream/arrowstream/plan"
	"github.com/arrowstream/arrowstream/server"
	"github.com/arrowstream/arrowstream/sql"
	"github.com/arrowstream/arrowstream/vector"
)

// SQLSTATE codes sent (PostgreSQL Appendix A).
const (
	stateSyntax            = "42601"
	stateUndefinedTable    = "42P01"
	stateUndefinedColumn   = "42703"
	stateUndefinedFunction = "42883"
	stateDatatypeMismatch  = "42804"
	stateGrouping          = "42803"
	stateAmbiguousColumn   = "42702"
	stateDuplicateTable    = "42P07"
	stateDivisionByZero    = "22012"
	stateInvalidText       = "22P02"
	stateOutOfRange        = "22003"
	stateInsufficientPriv  = "42501"
	stateQueryCanceled     = "57014"
	stateOutOfMemory       = "53200"
	stateTooManyConns      = "53300"
	stateFeatureNotSupp    = "0A000"
	stateProtocolViolation = "08P01"
	stateInvalidPassword   = "28P01"
	stateInvalidAuthSpec   = "28000"
	stateInvalidStmtName   = "26000"
	stateInvalidCursorName = "34000"
	stateDuplicateStmt     = "42P05"
	stateInvalidParamValue = "22023"
	stateProgramLimit      = "54000"
	stateInternal          = "XX000"
	stateSyntaxOrAccess    = "42000"
	stateAdminShutdown     = "57P01"
	stateInFailedTx        = "25P02"
)

// pgError is an error with its SQLSTATE, sent as an ErrorResponse.
type pgError struct {
	code string
	msg  string
	// fatal errors end the connection after they are sent.
	fatal bool
}

func (e *pgError) Error() string { return e.msg }

// sqlState maps an error of the engine or the server onto a SQLSTATE,
// by the sentinel or type it wraps first and by the server's status code
// for errors that crossed the server's limits.
func sqlState(err error) string {
	var pe *pgError
	var syn *sql.SyntaxError
	var lim *sql.LimitError
	var mle *server.MemoryLimitError
	switch {
	case errors.As(err, &pe):
		return pe.code
	case errors.As(err, &mle):
		return stateOutOfMemory
	case errors.Is(err, context.Canceled):
		return stateQueryCanceled
	case errors.Is(err, context.DeadlineExceeded):
		return stateQueryCanceled
	case errors.As(err, &syn):
		return stateSyntax
	case errors.As(err, &lim), errors.Is(err, sql.ErrTooLarge), errors.Is(err, plan.ErrPlanTooLarge):
		return stateProgramLimit
	case errors.Is(err, plan.ErrTableNotFound):
		return stateUndefinedTable
	case errors.Is(err, vector.ErrUnknownFunction):
		return stateUndefinedFunction
	case errors.Is(err, plan.ErrUnresolved), errors.Is(err, vector.ErrUnknownColumn):
		return stateUndefinedColumn
	case errors.Is(err, plan.ErrAmbiguous):
		return stateAmbiguousColumn
	case errors.Is(err, vector.ErrDivideByZero):
		return stateDivisionByZero
	case errors.Is(err, vector.ErrInvalidInput), errors.Is(err, vector.ErrInterval):
		return stateInvalidText
	case errors.Is(err, vector.ErrOverflow):
		return stateOutOfRange
	case errors.Is(err, server.ErrPermissionDenied):
		return stateInsufficientPriv
	case errors.Is(err, server.ErrAlreadyExists):
		return stateDuplicateTable
	case errors.Is(err, server.ErrNotFound):
		return stateUndefinedTable
	case errors.Is(err, plan.ErrAggregate):
		return stateGrouping
	case errors.Is(err, plan.ErrType), errors.Is(err, vector.ErrType):
		return stateDatatypeMismatch
	case errors.Is(err, plan.ErrUnsupported), errors.Is(err, server.ErrUnsupported), errors.Is(err, plan.ErrStreaming):
		return stateFeatureNotSupp
	}
	switch server.StatusCode(err) {
	case codes.ResourceExhausted:
		if strings.Contains(err.Error(), "memory") {
			return stateOutOfMemory
		}
		return stateProgramLimit
	case codes.PermissionDenied:
		return stateInsufficientPriv
	case codes.NotFound:
		return stateUndefinedTable
	case codes.AlreadyExists:
		return stateDuplicateTable
	case codes.DeadlineExceeded, codes.Canceled:
		return stateQueryCanceled
	case codes.Unimplemented:
		return stateFeatureNotSupp
	case codes.InvalidArgument:
		return stateSyntaxOrAccess
	case codes.Internal:
		return stateInternal
	}
	var pl *plan.Error
	if errors.As(err, &pl) {
		return stateSyntaxOrAccess
	}
	return stateInternal
}

// programPrefix starts the engine's and the server's error texts. The
// PostgreSQL endpoint leaves it out of the message it sends: PostgreSQL's
// own messages name no program (psql shows "ERROR:  relation ... does not
// exist", not "ERROR:  postgres: ..."), and clients show and match the
// SQLSTATE and the message. The server's log keeps the whole text
// (conn.sendError), as do the Flight SQL port's errors.
const programPrefix = "arrowstream: "

// errorResponse is the ErrorResponse of err.
func errorResponse(err error) *pgproto3.ErrorResponse {
	sev := "ERROR"
	var pe *pgError
	if errors.As(err, &pe) && pe.fatal {
		sev = "FATAL"
	}
	msg := err.Error()
	// gRPC status errors render as "rpc error: code = X desc = msg".
	if _, d, ok := strings.Cut(msg, " desc = "); ok && strings.HasPrefix(msg, "rpc error:") {
		msg = d
	}
	msg = strings.TrimPrefix(msg, programPrefix)
	// Bounded like the Flight SQL port's: messages quote their input.
	return &pgproto3.ErrorResponse{Severity: sev, SeverityUnlocalized: sev, Code: sqlState(err), Message: server.ShortenMessage(msg)}
}
