package security

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
)

// TestFileSystemConfined: SQL users reach no file outside --data-dir,
// through absolute paths, "..", symbolic links or globs, and cleanSource
// can neither delete nor archive outside it.
func TestFileSystemConfined(t *testing.T) {
	e := startServe(t)
	c := e.admin()
	secret := filepath.Join(e.outside, "secret.csv")
	if err := os.WriteFile(secret, []byte("a\nTOPSECRET\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(e.data, "in")
	if err := os.MkdirAll(in, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(in, "ok.csv"), []byte("a\nfine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(e.outside, filepath.Join(e.data, "escape")); err != nil {
		t.Fatal(err)
	}
	globDir := filepath.Join(e.data, "glob")
	os.MkdirAll(globDir, 0o755)
	if err := os.Symlink(secret, filepath.Join(globDir, "planted.csv")); err != nil {
		t.Fatal(err)
	}
	attacks := []struct {
		name, sql, want string
	}{
		{"etc/passwd", "CREATE TABLE pw USING csv OPTIONS (path '/etc/passwd', sep ':')", `"/etc/passwd"`},
		{"etc/shadow", "CREATE TABLE sh USING csv OPTIONS (path '/etc/shadow')", `"/etc/shadow"`},
		{"proc environ", "CREATE TABLE env USING csv OPTIONS (path '/proc/self/environ')", `"/proc/self/environ"`},
		{"outside dir", fmt.Sprintf("CREATE TABLE o USING csv OPTIONS (path '%s')", secret), secret},
		{"dot-dot", fmt.Sprintf("CREATE TABLE o USING csv OPTIONS (path '%s/../outside/secret.csv')", e.data), `".."`},
		{"symlinked dir", fmt.Sprintf("CREATE TABLE o USING csv OPTIONS (path '%s/escape/secret.csv')", e.data), "resolves to"},
		{"glob over a planted link", fmt.Sprintf("CREATE TABLE o USING csv OPTIONS (path '%s/*.csv')", globDir), "planted.csv"},
		{"glob through a link", fmt.Sprintf("CREATE TABLE o USING csv OPTIONS (path '%s/esc*/*.csv')", e.data), "outside"},
		{"cleanSource delete outside", fmt.Sprintf("CREATE TABLE o USING csv OPTIONS (path '%s', cleanSource 'delete')", e.outside), e.outside},
		{"cleanSource archive outside", fmt.Sprintf("CREATE TABLE o USING csv OPTIONS (path '%s', cleanSource 'archive', sourceArchiveDir '%s')", in, e.outside), "sourceArchiveDir"},
	}
	for _, a := range attacks {
		_, err := c.run(t, a.sql)
		refused(t, a.name, err, codes.PermissionDenied, "access denied", a.want, "--data-dir")
	}
	// A table's statement never echoes the file.
	if strings.Contains(e.output(), "TOPSECRET") {
		t.Error("the secret file's content reached the server's output")
	}
	if _, err := os.Stat(secret); err != nil {
		t.Errorf("the outside file was touched: %v", err)
	}
	// Inside the data root, files are served.
	c.mustRun(t, fmt.Sprintf("CREATE TABLE fine USING csv OPTIONS (path '%s', header 'true')", in))
	rows := c.mustRun(t, "SELECT a FROM fine")
	if len(rows) != 1 || rows[0][0] != "fine" {
		t.Errorf("SELECT a FROM fine = %v, want [[fine]]", rows)
	}
	e.alive(t)
}

// TestCheckpointsConfined: checkpointLocation and table names cannot put
// a checkpoint outside the checkpoint root.
func TestCheckpointsConfined(t *testing.T) {
	e := startServe(t)
	c := e.admin()
	c.mustRun(t, "CREATE TABLE ticks USING rate OPTIONS (rowsPerSecond '10')")
	attacks := []struct {
		name, sql string
		want      []string
		created   string
	}{
		{"absolute location", "CREATE STREAMING TABLE a1 TBLPROPERTIES ('checkpointLocation' = '/etc/x') AS SELECT * FROM STREAM ticks",
			[]string{`"/etc/x"`, "--checkpoint"}, "/etc/x"},
		{"relative escape", "CREATE STREAMING TABLE a2 TBLPROPERTIES ('checkpointLocation' = '../outside/q') AS SELECT * FROM STREAM ticks",
			[]string{`".."`, "--checkpoint"}, filepath.Join(e.outside, "q")},
		{"outside absolute", fmt.Sprintf("CREATE STREAMING TABLE a3 TBLPROPERTIES ('checkpointLocation' = '%s/q') AS SELECT * FROM STREAM ticks", e.outside),
			[]string{e.outside, "--checkpoint"}, filepath.Join(e.outside, "q")},
		{"table name with ..", "CREATE STREAMING TABLE `../../x` AS SELECT * FROM STREAM ticks",
			[]string{"path separator"}, filepath.Join(filepath.Dir(e.base), "x")},
		{"table name with /", "CREATE STREAMING TABLE `a/b` AS SELECT * FROM STREAM ticks",
			[]string{"path separator"}, filepath.Join(e.ck, "a")},
	}
	for _, a := range attacks {
		_, err := c.run(t, a.sql)
		refused(t, a.name, err, codes.PermissionDenied, append([]string{"access denied"}, a.want...)...)
		notExist(t, a.created)
	}
	// A state store's working directory is a path too.
	_, err := c.run(t, fmt.Sprintf("CREATE STREAMING TABLE st TBLPROPERTIES ('outputMode' = 'complete', 'stateStore.provider' = 'pebble', "+
		"'stateStore.pebble.localDir' = '%s/pebble') AS SELECT value %% 2 AS k, count(*) AS n FROM STREAM ticks GROUP BY value %% 2", e.outside))
	refused(t, "pebble localDir outside", err, codes.PermissionDenied, "access denied", "pebble.localdir", "--checkpoint")
	notExist(t, filepath.Join(e.outside, "pebble"))
	// A location under the root is fine.
	c.mustRun(t, "CREATE STREAMING TABLE inside TBLPROPERTIES ('checkpointLocation' = 'sub/inside') AS SELECT * FROM STREAM ticks")
	waitFor(t, "the inside checkpoint", func() bool {
		_, err := os.Stat(filepath.Join(e.ck, "sub", "inside", "metadata"))
		return err == nil
	})
	e.alive(t)
}

// TestEndpointsConfined: socket and Kafka sources reach only loopback and
// --allow-connect endpoints.
func TestEndpointsConfined(t *testing.T) {
	e := startServe(t, "--allow-connect", "kafka.invalid:9092")
	c := e.admin()
	attacks := []struct{ name, sql, want string }{
		{"socket to a private address", "CREATE TABLE s USING socket OPTIONS (host '10.1.2.3', port '22')", "10.1.2.3:22"},
		{"socket to link-local metadata", "CREATE TABLE s USING socket OPTIONS (host '169.254.169.254', port '80')", "169.254.169.254:80"},
		{"kafka to another broker", "CREATE TABLE k USING kafka OPTIONS ('kafka.bootstrap.servers' = 'kafka.invalid:9092,evil.invalid:9093', subscribe 't')", "evil.invalid:9093"},
	}
	for _, a := range attacks {
		_, err := c.run(t, a.sql)
		refused(t, a.name, err, codes.PermissionDenied, "access denied", a.want, "--allow-connect")
	}
	e.alive(t)
}
