package pgwire

import (
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/jackc/pgx/v5/pgtype"
)

// prepared is a statement of the extended protocol (Parse).
type prepared struct {
	text  string
	types []uint32 // one per placeholder
	// isQuery and schema describe the statement with its placeholders
	// bound to typed NULLs.
	isQuery bool
	schema  *arrow.Schema
	size    int64 // counted in conn.held
}

// maxPrepared bounds a connection's named statements and portals.
const maxPrepared = 10_000

func (c *conn) parse(m *pgproto3.Parse) error {
	if _, taken := c.stmts[m.Name]; taken && m.Name != "" {
		return &pgError{code: stateDuplicateStmt, msg: fmt.Sprintf("prepared statement %q already exists", m.Name)}
	}
	if len(c.stmts) >= maxPrepared {
		return &pgError{code: stateProgramLimit, msg: fmt.Sprintf("too many prepared statements on this connection (%d): close some", maxPrepared)}
	}
	stmts := splitStatements(m.Query)
	if len(stmts) > 1 {
		return &pgError{code: stateSyntax, msg: "cannot insert multiple commands into a prepared statement"}
	}
	text := ""
	if len(stmts) == 1 {
		text = stmts[0]
	}
	n, err := placeholderCount(text)
	if err != nil {
		return err
	}
	n = max(n, len(m.ParameterOIDs))
	st := &prepared{text: text, types: paramTypes(text, n, m.ParameterOIDs), size: int64(len(text))}
	// The unnamed statement is replaced: what it held is given back first.
	replaced := int64(0)
	if old, ok := c.stmts[m.Name]; ok {
		replaced = old.size
	}
	if err := c.checkHeld(st.size-replaced, "prepared statement"); err != nil {
		return err
	}
	if text != "" {
		var desc arrow.Record
		if len(st.types) > 0 {
			if desc, err = paramRecord(memory.DefaultAllocator, c.typeMap(), st.types, nil, nil); err != nil {
				return err
			}
		}
		p, err := c.newPortal(text, nil, desc)
		if err != nil {
			if desc != nil {
				desc.Release()
			}
			return err
		}
		st.isQuery, st.schema = p.isQuery, p.schema
		p.close()
	}
	c.dropStmt(m.Name)
	c.stmts[m.Name] = st
	c.held += st.size
	c.send(&pgproto3.ParseComplete{})
	return nil
}

func (c *conn) bind(m *pgproto3.Bind) error {
	st, ok := c.stmts[m.PreparedStatement]
	if !ok {
		return &pgError{code: stateInvalidStmtName, msg: fmt.Sprintf("prepared statement %q does not exist", m.PreparedStatement)}
	}
	if _, taken := c.portals[m.DestinationPortal]; taken {
		if m.DestinationPortal != "" {
			return &pgError{code: "42P03", msg: fmt.Sprintf("portal %q already exists", m.DestinationPortal)}
		}
		c.dropPortal("")
	}
	if len(c.portals) >= maxPrepared {
		return &pgError{code: stateProgramLimit, msg: fmt.Sprintf("too many portals on this connection (%d): close some", maxPrepared)}
	}
	text := st.text
	// A named portal counts its text and values, checked before the
	// values are decoded (their wire size bounds what the decoded record
	// holds, up to the fixed widths of small values). The unnamed portal
	// is one at most, replaced by every Bind and closed at Sync: bounded
	// by the message size already, it does not take room from the others.
	size := int64(0)
	if m.DestinationPortal != "" {
		size = int64(len(text)) + boundBytes(m.Parameters)
		if err := c.checkHeld(size, "portal"); err != nil {
			return err
		}
	}
	var params arrow.Record
	if len(st.types) > 0 || len(m.Parameters) > 0 {
		values := m.Parameters
		if values == nil {
			values = [][]byte{} // no values: not a description
		}
		var err error
		if params, err = paramRecord(memory.DefaultAllocator, c.typeMap(), st.types, m.ParameterFormatCodes, values); err != nil {
			return err
		}
	}
	var p *portal
	if text == "" {
		p = &portal{done: true, tag: ""}
		if params != nil {
			params.Release()
		}
	} else {
		var err error
		if p, err = c.newPortal(text, m.ResultFormatCodes, params); err != nil {
			if params != nil {
				params.Release()
			}
			return err
		}
		if p.isQuery {
			// Check the formats now, so that Bind reports a bad one.
			if _, err := newRowEncoder(p.schema, m.ResultFormatCodes, &c.opts); err != nil {
				p.close()
				return err
			}
		}
	}
	p.held = size
	c.portals[m.DestinationPortal] = p
	c.held += size
	c.send(&pgproto3.BindComplete{})
	return nil
}

// typeMap is the connection's pgtype map (decoding parameters).
func (c *conn) typeMap() *pgtype.Map {
	if c.types == nil {
		c.types = pgtype.NewMap()
	}
	return c.types
}

func (c *conn) describe(m *pgproto3.Describe) error {
	switch m.ObjectType {
	case 'S':
		st, ok := c.stmts[m.Name]
		if !ok {
			return &pgError{code: stateInvalidStmtName, msg: fmt.Sprintf("prepared statement %q does not exist", m.Name)}
		}
		c.send(&pgproto3.ParameterDescription{ParameterOIDs: st.types})
		if st.isQuery && st.schema != nil {
			c.send(rowDescription(st.schema, nil))
		} else {
			c.send(&pgproto3.NoData{})
		}
	case 'P':
		p, ok := c.portals[m.Name]
		if !ok {
			return &pgError{code: stateInvalidCursorName, msg: fmt.Sprintf("portal %q does not exist", m.Name)}
		}
		if !p.isQuery || p.schema == nil {
			c.send(&pgproto3.NoData{})
			return nil
		}
		enc, err := newRowEncoder(p.schema, p.formats, &c.opts)
		if err != nil {
			return err
		}
		c.send(rowDescription(p.schema, enc))
	default:
		return &pgError{code: stateProtocolViolation, msg: fmt.Sprintf("describe of object type %q: want 'S' or 'P'", m.ObjectType)}
	}
	return nil
}

func (c *conn) execute(m *pgproto3.Execute) error {
	p, ok := c.portals[m.Portal]
	if !ok {
		return &pgError{code: stateInvalidCursorName, msg: fmt.Sprintf("portal %q does not exist", m.Portal)}
	}
	if p.text == "" && p.done && p.tag == "" {
		c.send(&pgproto3.EmptyQueryResponse{})
		return nil
	}
	if c.txn == 'E' && !isTxnEnd(p.text) {
		return &pgError{code: stateInFailedTx, msg: "current transaction is aborted, commands ignored until end of transaction block"}
	}
	return c.run(p, int64(m.MaxRows))
}

func (c *conn) closeObject(m *pgproto3.Close) error {
	switch m.ObjectType {
	case 'S':
		c.dropStmt(m.Name)
	case 'P':
		c.dropPortal(m.Name)
	default:
		return &pgError{code: stateProtocolViolation, msg: fmt.Sprintf("close of object type %q: want 'S' or 'P'", m.ObjectType)}
	}
	c.send(&pgproto3.CloseComplete{})
	return nil
}

// boundBytes is the wire size of a Bind's parameter values.
func boundBytes(values [][]byte) int64 {
	n := int64(0)
	for _, v := range values {
		n += int64(len(v)) + 16 // a value's offsets and validity, roughly
	}
	return n
}

// checkHeld refuses a statement or portal that would take what the
// connection's statements and portals hold past Config.MaxPreparedBytes.
func (c *conn) checkHeld(more int64, what string) error {
	limit := c.srv.cfg.MaxPreparedBytes
	if more <= 0 || c.held+more <= limit {
		return nil
	}
	return &pgError{code: stateProgramLimit, msg: fmt.Sprintf(
		"this connection's prepared statements and portals hold %d bytes; a %s of %d more would pass the limit of %d bytes (--pg-max-prepared-bytes): close some (Close, DEALLOCATE)",
		c.held, what, more, limit)}
}

// dropStmt forgets a prepared statement (none: nothing).
func (c *conn) dropStmt(name string) {
	if st, ok := c.stmts[name]; ok {
		c.held -= st.size
		delete(c.stmts, name)
	}
}

// dropPortal closes and forgets a portal (none: nothing).
func (c *conn) dropPortal(name string) {
	if p, ok := c.portals[name]; ok {
		p.close()
		c.held -= p.held
		delete(c.portals, name)
	}
}
