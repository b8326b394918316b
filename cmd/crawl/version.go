package main

import (
	"fmt"
	"runtime/debug"
)

// printVersion prints the module version and the VCS revision the binary
// was built from, as `go build` records them (runtime/debug.ReadBuildInfo).
func (m *Main) printVersion() error {
	_, err := fmt.Fprintln(m.Stdout, versionLine(debug.ReadBuildInfo()))
	return err
}

// versionLine is `crawl --version`'s line: "crawl v1.2.3 (revision
// 0123abcd, 2026-11-25T10:00:00Z, modified) go1.26". A binary built by
// `go run`, `go test` or with -buildvcs=false records no revision, and one
// built outside a module records no module version; the line says so.
func versionLine(bi *debug.BuildInfo, ok bool) string {
	if !ok {
		return "crawl: no build information (built without module support)"
	}
	version := bi.Main.Version
	if version == "" || version == "(devel)" {
		version = "(devel)"
	}
	var rev, at string
	modified := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	vcs := "no VCS revision recorded (go run, go test and -buildvcs=false record none)"
	if rev != "" {
		vcs = "revision " + rev
		if at != "" {
			vcs += ", " + at
		}
		if modified {
			vcs += ", with uncommitted changes"
		}
	}
	return fmt.Sprintf("crawl %s %s (%s) %s", bi.Main.Path, version, vcs, bi.GoVersion)
}
