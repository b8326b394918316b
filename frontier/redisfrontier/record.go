package redisfrontier

import (
	"encoding/json"
	"fmt"

	"github.com/simcrawl/simcrawl/frontier"
)

// A record is an Item as the scripts store it: the JSON array
// [seq, depth, url, source, attempts, seed, lasterr], seed 0 or 1. JSON
// because Redis's Lua reads it with cjson; an array because field names
// would cost memory in every queued URL. The scripts find seq and depth
// with a pattern, so a record always starts "[seq,depth,".

// encodeRecord returns the item's record with sequence 0 (the script
// numbers it).
func encodeRecord(it frontier.Item) (string, error) {
	seed := 0
	if it.Seed {
		seed = 1
	}
	b, err := json.Marshal([]any{0, it.Depth, it.URL, it.Source, it.Attempts, seed, it.LastError})
	if err != nil {
		return "", fmt.Errorf("redisfrontier: encode %q: %w", it.URL, err)
	}
	return string(b), nil
}

func decodeRecord(s string) (frontier.Item, error) {
	var f [7]json.RawMessage
	var it frontier.Item
	var seq int64
	var seed int
	err := json.Unmarshal([]byte(s), &f)
	for i, dst := range []any{&seq, &it.Depth, &it.URL, &it.Source, &it.Attempts, &seed, &it.LastError} {
		if err != nil {
			break
		}
		err = json.Unmarshal(f[i], dst)
	}
	if err != nil {
		return frontier.Item{}, fmt.Errorf("%w: record %.200q: %v", errCorrupt, s, err)
	}
	it.Seed = seed != 0
	return it, nil
}
