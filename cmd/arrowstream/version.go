package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// runVersion is `arrowstream version`: the module version, the VCS
// revision it was built from (and whether the tree had uncommitted
// changes), and the Go version, from the binary's build information.
func runVersion(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		fmt.Fprintf(stderr, "arrowstream version: takes no arguments, got %q\n", args)
		return 2
	}
	info, ok := debug.ReadBuildInfo()
	writeVersion(stdout, info, ok)
	return 0
}

// writeVersion prints what info tells; ok is false when the binary has no
// build information.
func writeVersion(w io.Writer, info *debug.BuildInfo, ok bool) {
	if !ok || info == nil {
		fmt.Fprintf(w, "arrowstream (no build information)\ngo         %s\n", runtime.Version())
		return
	}
	version := info.Main.Version
	if version == "" || version == "(devel)" {
		version = "(devel: built from a source tree, not a published module)"
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	fmt.Fprintf(w, "arrowstream %s\n", version)
	fmt.Fprintf(w, "module     %s\n", info.Main.Path)
	if rev := settings["vcs.revision"]; rev != "" {
		state := "clean"
		if settings["vcs.modified"] == "true" {
			state = "modified (uncommitted changes)"
		}
		fmt.Fprintf(w, "revision   %s (%s)\n", rev, state)
		if t := settings["vcs.time"]; t != "" {
			fmt.Fprintf(w, "committed  %s\n", t)
		}
	} else {
		fmt.Fprintf(w, "revision   unknown (built without VCS information, e.g. by go run or -buildvcs=false)\n")
	}
	gov := info.GoVersion
	if gov == "" {
		gov = runtime.Version()
	}
	fmt.Fprintf(w, "go         %s %s/%s\n", gov, runtime.GOOS, runtime.GOARCH)
}
