package main

import (
	"context"
	"slices"
	"testing"

	"github.com/arrowstream/arrowstream/internal/testutil"
)

// TestClicksOptionKeysAreTheParsersKeys ties the declared keys of the
// clicks source to the keys its parser reads.
func TestClicksOptionKeysAreTheParsersKeys(t *testing.T) {
	if got, want := testutil.OptionKeysRead(t, "clicks.go", "parseClicksOptions"), testutil.LowerSorted(clicksOptionKeys()); !slices.Equal(got, want) {
		t.Errorf("parseClicksOptions reads %v, declared %v", got, want)
	}
}

// TestUnknownSourceOptions: a misspelled or unknown OPTIONS key of every
// source format is an error with a "did you mean" hint (or the list of
// keys), before any source is made.
func TestUnknownSourceOptions(t *testing.T) {
	e := newEngine(engineOptions{checkpointRoot: t.TempDir()})
	defer e.stop(0)
	for _, tc := range []struct{ sql, want string }{
		{"CREATE TABLE t USING rate OPTIONS (rowsPerSecnd '5')",
			"arrowstream: table t: unknown option 'rowsPerSecnd' of source format rate (did you mean 'rowsPerSecond'?)"},
		{"CREATE TABLE t USING `rate-micro-batch` OPTIONS (rowsPerBtch '5')",
			"arrowstream: table t: unknown option 'rowsPerBtch' of source format rate-micro-batch (did you mean 'rowsPerBatch'?)"},
		{"CREATE TABLE t USING csv OPTIONS (path '/tmp', hedaer 'true')",
			"arrowstream: table t: unknown option 'hedaer' of source format csv (did you mean 'header'?)"},
		{"CREATE TABLE t USING json OPTIONS (path '/tmp', colour 'blue')",
			"arrowstream: table t: unknown option 'colour' of source format json (known: path, maxFilesPerTrigger, maxBytesPerTrigger, latestFirst, maxFileAge, cleanSource, sourceArchiveDir, mode, columnNameOfCorruptRecord, header, inferSchema, sep, delimiter, nullValue, chunkBytes, checkpointLocation, queryName)"},
		{"CREATE TABLE t USING parquet OPTIONS (pth '/tmp')",
			"arrowstream: table t: unknown option 'pth' of source format parquet (did you mean 'path'?)"},
		{"CREATE TABLE t USING kafka OPTIONS ('kafka.bootstrap.servers' 'x:1', subscrbe 'a')",
			"arrowstream: table t: unknown option 'subscrbe' of source format kafka (did you mean 'subscribe'?)"},
		{"CREATE TABLE t USING socket OPTIONS (host 'localhost', prt '9')",
			"arrowstream: table t: unknown option 'prt' of source format socket (did you mean 'port'?)"},
		{"CREATE TABLE t USING clicks OPTIONS (user '5')",
			"arrowstream: table t: unknown option 'user' of source format clicks (did you mean 'users'?)"},
		{"CREATE TABLE t (a INT) USING memory OPTIONS (size '5')",
			"arrowstream: table t: unknown option 'size': source format memory takes no options"},
	} {
		_, err := e.SQL(context.Background(), tc.sql)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s:\n got %v\nwant %s", tc.sql, err, tc.want)
		}
	}
}
