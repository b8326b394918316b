package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
)

// failedJSON is one line of `crawl failed --json`; its field names are a
// contract for scripts.
type failedJSON struct {
	URL    string `json:"url"`
	Reason string `json:"reason"`
}

func (m *Main) runFailed(ctx context.Context, args []string) (err error) {
	fset := m.newFlagSet("failed")
	asJSON := fset.Bool("json", false, `one JSON object per URL: {"url","reason"}`)
	skipped := fset.Bool("skipped", false, "list the URLs skipped instead (neither stored nor dropped: robots, non-html, noindex,\nurl-stored, redirect-to:URL, redirect-out-of-scope), with the reason")
	var cf configFlags
	m.addConfigFlags(fset, &cf)
	if err := fset.Parse(args); err != nil {
		return err
	}
	if fset.NArg() > 0 {
		return usageErrorf(fset, "failed: unexpected argument %q", fset.Arg(0))
	}
	data, err := m.openData(cf, "failed")
	if err != nil {
		return err
	}
	defer func() {
		if cerr := data.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("failed: close: %w", cerr)
		}
	}()
	defer data.Recover(&err)
	bw := bufio.NewWriter(m.Stdout)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	n := 0
	list := data.Failed
	if *skipped {
		list = data.Skipped
	}
	err = list(func(url, reason string) error {
		n++
		if *asJSON {
			return enc.Encode(failedJSON{URL: url, Reason: reason})
		}
		_, err := fmt.Fprintf(bw, "%s\t%s\n", url, reason)
		return err
	})
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	if err != nil {
		return fmt.Errorf("failed: %w", err)
	}
	if !*asJSON && *skipped {
		fmt.Fprintf(m.Stderr, "%d skipped URL%s\n", n, plural(n))
	} else if !*asJSON {
		switch n {
		case 0:
			fmt.Fprintln(m.Stderr, "no failed URLs")
		case 1:
			fmt.Fprintln(m.Stderr, "1 failed URL; `crawl --seeds ... --retry-failed` queues it again")
		default:
			fmt.Fprintf(m.Stderr, "%d failed URLs; `crawl --seeds ... --retry-failed` queues them again\n", n)
		}
	}
	return nil
}
