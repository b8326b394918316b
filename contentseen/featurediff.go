package contentseen

// OnlyIn returns the n heaviest features of a whose text b lacks, heaviest
// first when a is (as Fingerprinter.Features returns it): what one text
// weighs in its fingerprint that the other does not, for explaining a
// distance (`crawl dups show`, the web view's pair page).
func OnlyIn(a, b []Feature, n int) []Feature {
	in := make(map[string]bool, len(b))
	for _, f := range b {
		in[f.Text] = true
	}
	var out []Feature
	for _, f := range a {
		if len(out) == n {
			break
		}
		if !in[f.Text] {
			out = append(out, f)
		}
	}
	return out
}
