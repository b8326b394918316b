package main

import (
	"cmp"
	"context"
	"encoding/json"
	"io"
	"slices"

	"github.com/simcrawl/simcrawl/contentseen"
	"github.com/simcrawl/simcrawl/crawler"
	"github.com/simcrawl/simcrawl/storage"
)

// groupKey names the stored page a group of drops duplicates: a page of
// the set (page), or, for drops whose page no directory read stores, the
// page's URL (elsewhere, with page zero).
type groupKey struct {
	page      crawler.PageRef
	elsewhere string
}

// dropRef names a drop of the set: its directory's index and its ID.
type dropRef struct {
	dir int
	id  uint64
}

// dupGroups is what listDups counts before it prints: per group the
// drops that match the filter, and the drops whose page another directory
// stores (read back one by one when the group is printed; the others come
// from the index of their page's own directory).
type dupGroups struct {
	n       map[groupKey]int
	foreign map[groupKey][]dropRef
}

// countDups reads every drop header of set once and counts the drops of
// each group that match f. A drop names its page by ID in its own
// directory, or by URL when another worker stored it (KeptPage resolves
// that URL across the set). Memory: one count per group and one dropRef
// per drop of a page in another directory.
func countDups(ctx context.Context, set *crawler.DataSet, f dupFilter) (*dupGroups, error) {
	g := &dupGroups{n: map[groupKey]int{}, foreign: map[groupKey][]dropRef{}}
	err := set.Each(func(i int, d *crawler.Data) error {
		return d.Store.DropHeaders(ctx, func(dr *storage.Drop) error {
			if !f.match(dr) {
				return nil
			}
			if dr.DuplicateOfURL == "" {
				g.n[groupKey{page: crawler.PageRef{Dir: i, ID: dr.DuplicateOf}}]++
				return nil
			}
			ref, ok, err := set.KeptPage(i, dr)
			set.In(i) // KeptPage read other directories; the scan reads this one
			if err != nil {
				return err
			}
			k := groupKey{page: ref}
			if !ok {
				k = groupKey{page: crawler.PageRef{Dir: len(set.Dirs)}, elsewhere: dr.DuplicateOfURL}
			}
			g.n[k]++
			g.foreign[k] = append(g.foreign[k], dropRef{i, dr.ID})
			return nil
		})
	})
	return g, err
}

// listDups writes the groups of drops of set that match f, largest first
// (ties in directory, then page order; pages no directory read stores
// last), each group's drops in directory, then drop order. It reads the
// drop headers twice (count, then print), and the headers of the pages
// that head a group; memory is one count per group and one group's drops
// at a time. unresolved counts the printed drops whose page none of the
// directories stores.
func listDups(ctx context.Context, set *crawler.DataSet, f dupFilter, w io.Writer, asJSON bool) (groups, drops, unresolved int, err error) {
	g, err := countDups(ctx, set, f)
	if err != nil {
		return 0, 0, 0, err
	}
	keys := make([]groupKey, 0, len(g.n))
	for k := range g.n {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b groupKey) int {
		return cmp.Or(cmp.Compare(g.n[b], g.n[a]), cmp.Compare(a.page.Dir, b.page.Dir),
			cmp.Compare(a.page.ID, b.page.ID), cmp.Compare(a.elsewhere, b.elsewhere))
	})

	// The stored pages' URLs and titles, from metadata only.
	heads := make(map[crawler.PageRef]*storage.Page, len(keys))
	for _, k := range keys {
		if k.elsewhere == "" {
			heads[k.page] = nil
		}
	}
	if err := set.Each(func(i int, d *crawler.Data) error {
		return d.Store.PageHeaders(ctx, func(p *storage.Page) error {
			if _, ok := heads[crawler.PageRef{Dir: i, ID: p.ID}]; ok {
				heads[crawler.PageRef{Dir: i, ID: p.ID}] = p
			}
			return nil
		})
	}); err != nil {
		return 0, 0, 0, err
	}
	multi := len(set.Dirs) > 1
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, k := range keys {
		out := dupGroupJSON{ID: k.page.ID, URL: k.elsewhere, Drops: []dupDropJSON{}, elsewhere: k.elsewhere != ""}
		if p := heads[k.page]; p != nil {
			out.URL, out.Title, out.Fingerprint = p.URL, p.Title, contentseen.Fingerprint(p.Fingerprint).String()
		}
		if multi && k.elsewhere == "" {
			out.Data = set.Dirs[k.page.Dir].Dir
		}
		groupDrops, err := g.drops(ctx, set, k, f)
		if err != nil {
			return 0, 0, 0, err
		}
		for _, gd := range groupDrops {
			dj := newDupDropJSON(gd.drop)
			if multi {
				dj.Data = set.Dirs[gd.dir].Dir
			}
			out.Drops = append(out.Drops, dj)
		}
		if len(out.Drops) == 0 { // every drop added since the count was filtered out
			continue
		}
		groups++
		drops += len(out.Drops)
		if out.elsewhere {
			unresolved += len(out.Drops)
		}
		if asJSON {
			if err := enc.Encode(out); err != nil {
				return 0, 0, 0, err
			}
			continue
		}
		if err := writeGroup(w, out); err != nil {
			return 0, 0, 0, err
		}
	}
	return groups, drops, unresolved, nil
}

// groupDrop is a drop of a group and the index of its directory.
type groupDrop struct {
	dir  int
	drop *storage.Drop
}

// drops returns the drops of group k that match f, in directory then drop
// order: those its page's directory records against the page's ID, and
// those other directories record against its URL.
func (g *dupGroups) drops(ctx context.Context, set *crawler.DataSet, k groupKey, f dupFilter) ([]groupDrop, error) {
	var out []groupDrop
	if k.elsewhere == "" {
		d := set.In(k.page.Dir)
		if err := d.Store.DropsOf(ctx, k.page.ID, func(dr *storage.Drop) error {
			// A drop recorded by URL may sit under any ID in the
			// index: countDups placed it by its URL.
			if dr.DuplicateOfURL == "" && f.match(dr) {
				out = append(out, groupDrop{k.page.Dir, dr})
			}
			return nil
		}); err != nil {
			return nil, err
		}
	}
	for _, r := range g.foreign[k] {
		dr, err := set.In(r.dir).Store.GetDropHeader(ctx, r.id)
		if err != nil {
			return nil, err
		}
		out = append(out, groupDrop{r.dir, dr})
	}
	slices.SortStableFunc(out, func(a, b groupDrop) int {
		return cmp.Or(cmp.Compare(a.dir, b.dir), cmp.Compare(a.drop.ID, b.drop.ID))
	})
	return out, nil
}

func newDupDropJSON(d *storage.Drop) dupDropJSON {
	dj := dupDropJSON{
		URL: d.URL, FinalURL: d.FinalURL, Distance: d.Distance, Reason: d.Reason,
		Fingerprint: contentseen.Fingerprint(d.Fingerprint).String(), Title: d.Title,
		FetchedAt: d.FetchedAt.UTC(), Depth: d.Depth,
	}
	if d.Similarity > 0 || d.Containment > 0 {
		sim, cont := round3(d.Similarity), round3(d.Containment)
		dj.Similarity, dj.Containment = &sim, &cont
	}
	return dj
}
