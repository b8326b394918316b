package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/simcrawl/simcrawl/crawler"
)

// failedJSON is one line of `crawl failed --json`; its field names are a
// contract for scripts.
type failedJSON struct {
	URL    string `json:"url"`
	Reason string `json:"reason"`
	// Data is the data directory that recorded it, only when several are
	// read (the workers of a distributed crawl).
	Data string `json:"data,omitempty"`
}

func (m *Main) runFailed(ctx context.Context, args []string) (err error) {
	fset := m.newFlagSet("failed")
	asJSON := fset.Bool("json", false, `one JSON object per URL: {"url","reason"}, and "data" (its directory) when several --data are read`)
	skipped := fset.Bool("skipped", false, "list the URLs skipped instead (neither stored nor dropped: robots, non-html, noindex,\nurl-stored, redirect-to:URL, redirect-out-of-scope), with the reason")
	var cf configFlags
	m.addReadFlags(fset, &cf)
	if err := fset.Parse(args); err != nil {
		return err
	}
	if fset.NArg() > 0 {
		return usageErrorf(fset, "failed: unexpected argument %q", fset.Arg(0))
	}
	set, _, err := m.openDataSet(fset, cf, "failed")
	if err != nil {
		return err
	}
	defer func() {
		if cerr := set.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("failed: close: %w", cerr)
		}
	}()
	defer set.Recover(&err)
	bw := bufio.NewWriter(m.Stdout)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	n := 0
	emit := func(r failedJSON) error {
		n++
		if *asJSON {
			return enc.Encode(r)
		}
		_, err := fmt.Fprintf(bw, "%s\t%s\n", r.URL, r.Reason)
		return err
	}
	list := func(d *crawler.Data) func(func(url, reason string) error) error {
		if *skipped {
			return d.Skipped
		}
		return d.Failed
	}
	if len(set.Dirs) == 1 {
		err = list(set.Dirs[0])(func(url, reason string) error { return emit(failedJSON{URL: url, Reason: reason}) })
	} else {
		err = emitMerged(set, list, emit)
	}
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
	if !*asJSON && len(set.Dirs) > 1 {
		fmt.Fprintf(m.Stderr, "Read as one crawl: %s.\n", dirNames(set))
	}
	return nil
}

// emitMerged lists the URLs of every directory of set in URL order (each
// directory's list is), as one list: in memory, one row a URL.
func emitMerged(set *crawler.DataSet, list func(*crawler.Data) func(func(url, reason string) error) error, emit func(failedJSON) error) error {
	var rows []failedJSON
	err := set.Each(func(_ int, d *crawler.Data) error {
		return list(d)(func(url, reason string) error {
			rows = append(rows, failedJSON{URL: url, Reason: reason, Data: d.Dir})
			return nil
		})
	})
	if err != nil {
		return err
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].URL < rows[j].URL })
	for _, r := range rows {
		if err := emit(r); err != nil {
			return err
		}
	}
	return nil
}
