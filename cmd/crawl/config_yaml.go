package main

import (
	"bytes"
	"cmp"
	"encoding"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// decodeStrict decodes a config document over cfg. Unknown keys are errors,
// and so is a value of the wrong kind, named the way the file writes it.
//
// yaml.v3 alone is not strict enough: it truncates 1.5 into an integer
// field without a word, names Go types in its messages and cuts long values
// short. So the document is first parsed into a node tree and checked
// against Config's type (checkKinds), then decoded by a Decoder with
// KnownFields, which yaml.Node.Decode has no way to ask for. On any error cfg
// is left as it was.
func decodeStrict(b []byte, cfg *Config) error {
	var doc yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(b)).Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil // an empty file keeps the defaults
		}
		return syntaxLine(err)
	}
	problems := checkKinds(&doc, reflect.TypeFor[Config]())

	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	next := *cfg
	err := dec.Decode(&next)
	var te *yaml.TypeError
	switch {
	case errors.As(err, &te):
		problems = append(problems, plainTypeErrors(te, problems)...)
	case err != nil && len(problems) == 0:
		return err
	case err != nil && reLine.MatchString(err.Error()):
		// A Duration or ByteSize that will not parse stops the decoder.
		problems = append(problems, err.Error())
	case err != nil:
		// A decoder failure without a line ("yaml: cannot decode !!float
		// `3.5` as a !!int") mostly restates a problem found above and
		// cannot be matched to it; any other shows once those are fixed.
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(byLine(problems), "; "))
	}
	*cfg = next
	return nil
}

// kindCheck walks a node tree beside the Go type it will decode into.
type kindCheck struct {
	problems []string
	// anchored holds the anchored nodes already walked, per type: each is
	// walked once however many aliases name it, so a bad value is reported
	// once, and a walk into a recursive type (none in Config yet) ends.
	anchored map[anchorVisit]bool
}

type anchorVisit struct {
	n *yaml.Node
	t reflect.Type
}

// checkKinds returns a message, "line N: ...", for every value in doc of
// the wrong kind for where it is written. It leaves alone what a type's own
// UnmarshalYAML or UnmarshalText checks (Duration, ByteSize), null (which
// keeps the default) and keys unknown to t (the strict Decoder names them).
func checkKinds(doc *yaml.Node, t reflect.Type) []string {
	c := kindCheck{anchored: map[anchorVisit]bool{}}
	c.walk(doc, t, "")
	return c.problems
}

var (
	unmarshalerType     = reflect.TypeFor[yaml.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
	// yaml.v3 still honours v2's UnmarshalYAML(func(any) error) error.
	oldUnmarshalerType = reflect.TypeFor[interface{ UnmarshalYAML(func(any) error) error }]()
)

// walk checks n as the value of key (dotted, "" for the whole file) of type t.
func (c *kindCheck) walk(n *yaml.Node, t reflect.Type, key string) {
	switch n.Kind {
	case yaml.DocumentNode:
		for _, d := range n.Content {
			c.walk(d, t, key)
		}
		return
	case yaml.AliasNode:
		if n.Alias != nil {
			c.walk(n.Alias, t, key)
		}
		return
	}
	if n.Anchor != "" {
		v := anchorVisit{n, t}
		if c.anchored[v] {
			return
		}
		c.anchored[v] = true
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	pt := reflect.PointerTo(t)
	if n.ShortTag() == "!!null" || t == reflect.TypeFor[yaml.Node]() || t.Kind() == reflect.Interface ||
		pt.Implements(unmarshalerType) || pt.Implements(oldUnmarshalerType) ||
		n.Kind == yaml.ScalarNode && pt.Implements(textUnmarshalerType) {
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			if key == "" {
				c.report(n, "the file must hold keys (key: value), not %s", written(n))
			} else {
				c.report(n, "%s is not a section: %s holds keys (key: value)", written(n), key)
			}
			return
		}
		fields := yamlFields(t)
		pairs(n, func(k string, v *yaml.Node) {
			if ft, ok := fields[k]; ok {
				c.walk(v, ft, joinKey(key, k))
			}
		})
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			c.report(n, "%s is not a section (key: value)", written(n))
			return
		}
		pairs(n, func(k string, v *yaml.Node) { c.walk(v, t.Elem(), joinKey(key, k)) })
	case reflect.Slice, reflect.Array:
		if n.Kind != yaml.SequenceNode {
			c.report(n, "%s is not a list, written [a, b]", written(n))
			return
		}
		for _, e := range n.Content {
			c.walk(e, t.Elem(), key)
		}
	default:
		c.scalar(n, t)
	}
}

// pairs calls f with each key: value of the mapping n, following merge keys
// (<<: *base) into the mappings they merge. As YAML merges, a key the
// mapping sets itself hides the merged ones, and of merged mappings the
// first to set a key wins. Keys that are not scalars, and keys set twice,
// are the decoder's to report.
func pairs(n *yaml.Node, f func(k string, v *yaml.Node)) {
	mergedPairs(n, map[string]bool{}, map[*yaml.Node]bool{}, f)
}

// mergedPairs is pairs over n, skipping the keys in set and adding those it
// reports; seen ends a mapping that merges itself.
func mergedPairs(n *yaml.Node, set map[string]bool, seen map[*yaml.Node]bool, f func(k string, v *yaml.Node)) {
	if n = unalias(n); n.Kind != yaml.MappingNode || seen[n] {
		return
	}
	seen[n] = true
	var merged []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.Value == "<<" && k.ShortTag() == "!!merge" {
			if v = unalias(v); v.Kind == yaml.SequenceNode {
				merged = append(merged, v.Content...)
			} else {
				merged = append(merged, v)
			}
			continue
		}
		if k = unalias(k); k.Kind == yaml.ScalarNode && !set[k.Value] {
			set[k.Value] = true
			f(k.Value, v)
		}
	}
	for _, m := range merged {
		mergedPairs(m, set, seen, f)
	}
}

// scalar checks a value aimed at a Go kind written as one scalar: a number,
// true or false, or a string.
func (c *kindCheck) scalar(n *yaml.Node, t reflect.Type) {
	want := map[reflect.Kind]string{reflect.Bool: "true or false", reflect.String: "a string",
		reflect.Float32: "a number", reflect.Float64: "a number"}[t.Kind()]
	lo, hi, whole := wholeRange(t)
	if whole {
		want = "a whole number"
	}
	if want == "" {
		want = "valid here" // no config key has such a kind yet
	}
	if n.Kind != yaml.ScalarNode {
		c.report(n, "%s is not %s", written(n), want)
		return
	}
	// Decoding the lone node into a fresh value asks yaml itself whether it
	// fits; only its silent truncation of floats needs checking by tag.
	err := n.Decode(reflect.New(t).Interface())
	tag := n.ShortTag()
	switch {
	case err == nil && !(whole && tag == "!!float"):
	case err == nil && integral(n.Value):
		// 1e7 or 10.0: a whole number, which yaml decodes exactly.
	case err != nil && whole && tag != "!!str" && reDigits.MatchString(n.Value):
		c.report(n, "%q is out of range (%s to %s)", n.Value, lo, hi)
	default:
		c.report(n, "%q is not %s", n.Value, want)
	}
}

var reDigits = regexp.MustCompile(`^[-+]?[0-9][0-9_]*$`)

// integral reports whether a YAML float is a whole number that a float64
// holds exactly (below 2^53), so that decoding it into an integer loses
// nothing.
func integral(v string) bool {
	f, err := strconv.ParseFloat(strings.ReplaceAll(v, "_", ""), 64)
	return err == nil && f == math.Trunc(f) && math.Abs(f) < 1<<53
}

// wholeRange reports whether t holds whole numbers and, if so, its bounds.
func wholeRange(t reflect.Type) (lo, hi string, ok bool) {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		bits := t.Bits()
		return strconv.FormatInt(-1<<(bits-1), 10), strconv.FormatInt(1<<(bits-1)-1, 10), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return "0", strconv.FormatUint(1<<t.Bits()-1, 10), true
	}
	return "", "", false
}

func (c *kindCheck) report(n *yaml.Node, format string, args ...any) {
	c.problems = append(c.problems, fmt.Sprintf("line %d: ", n.Line)+fmt.Sprintf(format, args...))
}

// written names a value as the user wrote it: a scalar in full, quoted;
// otherwise its shape.
func written(n *yaml.Node) string {
	switch unalias(n).Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "a section (key: value)"
	}
	return strconv.Quote(n.Value)
}

func unalias(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

func joinKey(section, key string) string {
	if section == "" {
		return key
	}
	return section + "." + key
}

// yamlFields maps each key of struct t to its field's type, as yaml.v3
// names them: the yaml tag's name, else the lowercased field name; "-" and
// unexported fields skipped; ",inline" structs' keys lifted into t.
func yamlFields(t reflect.Type) map[string]reflect.Type {
	fields := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() && !f.Anonymous {
			continue
		}
		tag := f.Tag.Get("yaml")
		if tag == "" && !strings.Contains(string(f.Tag), ":") {
			tag = string(f.Tag)
		}
		name, flags, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if slices.Contains(strings.Split(flags, ","), "inline") {
			// An inline map takes the keys no field has: leave those to the
			// decoder, as it leaves inline Unmarshalers to themselves.
			if ft.Kind() == reflect.Struct && !reflect.PointerTo(ft).Implements(unmarshalerType) {
				for k, v := range yamlFields(ft) {
					fields[k] = v
				}
			}
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		fields[name] = f.Type
	}
	return fields
}

// configKeys returns every key of config.yaml, dotted (fetch.delay), each
// section before its keys, in a fixed order.
func configKeys() []string {
	var keys []string
	var walk func(t reflect.Type, prefix string)
	walk = func(t reflect.Type, prefix string) {
		fields := yamlFields(t)
		names := slices.Sorted(maps.Keys(fields))
		for _, name := range names {
			keys = append(keys, prefix+name)
			if ft := fields[name]; ft.Kind() == reflect.Struct {
				walk(ft, prefix+name+".")
			}
		}
	}
	walk(reflect.TypeFor[Config](), "")
	return keys
}

// Sections of config.yaml by the Go type that decodes them, to name keys
// in errors the way the file writes them.
var configSections = map[string]string{
	"Config": "", "ScopeConfig": "scope.", "FetchConfig": "fetch.",
	"ContentSeenConfig": "contentseen.", "StoreConfig": "store.", "LogConfig": "log.",
}

var (
	reLinePrefix = regexp.MustCompile(`(^|; )(yaml: )?line \d+: `)
	reLine       = regexp.MustCompile(`^line (\d+): `)
	reUnknownKey = regexp.MustCompile(`field (\S+) not found in type main\.(\w+)`)
	reSetTwice   = regexp.MustCompile(`field (\S+) already set in type main\.(\w+)`)
	reWrongType  = regexp.MustCompile("cannot unmarshal !!(\\w+)(?: `(.*)`)? into (\\S+)")
)

// plainTypeErrors rewrites the decoder's messages, which speak of Go types,
// in the file's terms: "unknown key fetch.delai". A "cannot unmarshal" on a
// line that checkKinds already explained is dropped; the rest are what
// checkKinds does not model (a list used as a key), said as plainly as the
// decoder's cut-short value allows.
func plainTypeErrors(te *yaml.TypeError, explained []string) []string {
	lines := map[string]bool{}
	for _, p := range explained {
		lines[reLine.FindString(p)] = true
	}
	var msgs []string
	for _, m := range te.Errors {
		if reWrongType.MatchString(m) && lines[reLine.FindString(m)] {
			continue
		}
		m = reUnknownKey.ReplaceAllStringFunc(m, func(s string) string {
			g := reUnknownKey.FindStringSubmatch(s)
			key := configSections[g[2]] + g[1]
			if s := suggest(key, configKeys()); s != "" {
				return fmt.Sprintf("unknown key %s (did you mean %s?)", key, s)
			}
			return fmt.Sprintf("unknown key %s (config.yaml at the repository root lists every key)", key)
		})
		m = reSetTwice.ReplaceAllStringFunc(m, func(s string) string {
			g := reSetTwice.FindStringSubmatch(s)
			return fmt.Sprintf("key %s%s is set twice", configSections[g[2]], g[1])
		})
		m = reWrongType.ReplaceAllStringFunc(m, func(s string) string {
			g := reWrongType.FindStringSubmatch(s)
			what := map[string]string{"seq": "a list", "map": "a section (key: value)"}[g[1]]
			if what == "" {
				what = strconv.Quote(g[2])
			}
			want := map[string]string{"string": "a string", "bool": "true or false", "[]string": "a list, written [a, b]"}[g[3]]
			if want == "" {
				want = "valid here" // never a Go type name
			}
			return fmt.Sprintf("%s is not %s", what, want)
		})
		msgs = append(msgs, m)
	}
	return msgs
}

// byLine orders messages by their "line N: " prefix, keeping the order of
// those on one line and putting any without a line last.
func byLine(msgs []string) []string {
	line := func(m string) int {
		g := reLine.FindStringSubmatch(m)
		if g == nil {
			return math.MaxInt
		}
		n, err := strconv.Atoi(g[1])
		if err != nil {
			return math.MaxInt
		}
		return n
	}
	slices.SortStableFunc(msgs, func(a, b string) int { return cmp.Compare(line(a), line(b)) })
	return msgs
}

// reParserError matches yaml.v3's syntax errors from its parser, whose
// messages (parserc.go) its scanner's never repeat: the scanner's own
// "did not find expected ..." (hexdecimal number, tag URI, ...) count
// lines from 1 already.
var reParserError = regexp.MustCompile(`^yaml: (?:line (\d+): )?((?:did not find expected (?:',' or '\]'|',' or '\}'|'-' indicator|<document start>|<stream-start>|key|node content)|found undefined tag handle|found duplicate %TAG directive)(?:$|[^a-z].*$))`)

// syntaxLine corrects the line of a yaml.v3 parser error. yaml.v3 counts
// a parser error's line from 0 (its scanner errors from 1), and leaves the
// line out when it is 0: `b: [1` on line 2 is reported as line 1, `- x`
// on line 4 after a mapping as line 3, an error on line 1 with no line.
// The line is where the construct the parser was in began (the flow
// sequence), or where it gave up.
func syntaxLine(err error) error {
	g := reParserError.FindStringSubmatch(err.Error())
	if g == nil {
		return err
	}
	line := 0
	if g[1] != "" {
		line, _ = strconv.Atoi(g[1])
	}
	return fmt.Errorf("yaml: line %d: %s", line+1, g[2])
}
