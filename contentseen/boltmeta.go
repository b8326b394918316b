package contentseen

import bolt "go.etcd.io/bbolt"

// ReadBoltMeta returns the layout name and feature scheme (Options.String)
// recorded by the BoltIndex kept in bucket of tx's database ("" means
// "contentseen"), without opening the index: read-only tools such as
// `crawl dups show` use it to fingerprint texts exactly as the crawl did.
// ok is false when the database holds no index there.
func ReadBoltMeta(tx *bolt.Tx, bucket string) (layout, scheme string, ok bool) {
	if bucket == "" {
		bucket = "contentseen"
	}
	top := tx.Bucket([]byte(bucket))
	if top == nil {
		return "", "", false
	}
	meta := top.Bucket(metaBucket)
	if meta == nil {
		return "", "", false
	}
	return string(meta.Get(layoutKey)), string(meta.Get(schemeKey)), true
}
